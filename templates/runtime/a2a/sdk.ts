/**
 * The parts of the official A2A SDK (@a2a-js/sdk) that /a2a and /a2a/rest use, typed here by small
 * interfaces and loaded on the first A2A request (route.ts), so a service never called over A2A
 * never loads it, and `npm run typecheck` reads none of its declarations. Field names are the SDK's
 * (A2A 1.0 as TypeScript: `Part.content.$case`, numeric TaskState); create-agent's own tests run
 * this transport against the real SDK at the version package.json pins.
 * Part of your project: edit freely.
 */
import type { RequestHandler } from "express";

/** TaskState, the SDK's numbers. */
export const TaskState = {
  submitted: 1,
  working: 2,
  completed: 3,
  failed: 4,
  canceled: 5,
  inputRequired: 6,
  rejected: 7,
} as const;

/** The states a task never leaves (the SDK refuses a message on such a task). */
export const TERMINAL_STATES: readonly number[] = [
  TaskState.completed,
  TaskState.failed,
  TaskState.canceled,
  TaskState.rejected,
];

/** A message or artifact part; only data and text parts are made here. */
export interface Part {
  content?: { $case: string; value: unknown };
  metadata?: Record<string, unknown> | undefined;
  filename?: string;
  mediaType?: string;
}

export interface Message {
  messageId: string;
  contextId: string;
  taskId: string;
  role: number;
  parts: Part[];
  metadata?: Record<string, any> | undefined;
  extensions: string[];
  referenceTaskIds: string[];
}

export interface TaskStatus {
  state: number;
  message: Message | undefined;
  timestamp: string | undefined;
}

export interface Task {
  id: string;
  contextId: string;
  status: TaskStatus | undefined;
  artifacts: unknown[];
  history: Message[];
  metadata?: Record<string, any> | undefined;
}

/** What the request handler gives the executor (RequestContext). */
export interface RequestContext {
  readonly taskId: string;
  readonly contextId: string;
  readonly task?: Task;
  readonly userMessage: Message;
  readonly request: { configuration?: { returnImmediately?: boolean } };
  readonly context: CallContext;
}

/** ServerCallContext: the extensions the caller asked for (A2A-Extensions), and the ones used. */
export interface CallContext {
  readonly requestedExtensions?: Iterable<string>;
  /**
   * The extensions activated (endpoint.ts activates a2a-x402 before the SDK runs the executor; by then the
   * SDK has dropped it from requestedExtensions, which keeps only the extensions its own card lists).
   */
  readonly activatedExtensions?: Iterable<string>;
  addActivatedExtension(uri: string): void;
}

export interface EventBus {
  publish(event: unknown): void;
  finished(): void;
}

export interface AgentExecutor {
  execute(context: RequestContext, bus: EventBus): Promise<void>;
  cancelTask(taskId: string, bus: EventBus): Promise<void>;
}

export interface TaskStore {
  save(task: Task, context: unknown): Promise<void>;
  load(taskId: string, context: unknown): Promise<Task | undefined>;
  list(params: unknown, context: unknown): Promise<unknown>;
}

/** SendMessageRequest, as the request handler receives it. */
export interface SendParams {
  message?: Message;
  configuration?: { returnImmediately?: boolean };
}

export interface A2aSdk {
  /** DefaultRequestHandler (server). */
  DefaultRequestHandler: new (
    card: Record<string, unknown>,
    store: TaskStore,
    executor: AgentExecutor,
    ...rest: unknown[]
  ) => {
    sendMessage(params: SendParams, context: CallContext): Promise<unknown>;
    cancelTask(params: { id: string }, context: CallContext): Promise<unknown>;
    getTask(params: { id: string }, context: CallContext): Promise<unknown>;
  };
  jsonRpcHandler(options: Record<string, unknown>): RequestHandler;
  /** The HTTP+JSON (REST) binding's router: POST /message:send, GET /tasks/{id}... under its mount path. */
  restHandler(options: Record<string, unknown>): RequestHandler;
  noAuthentication: unknown;
  AgentEvent: {
    message(message: Message): unknown;
    task(task: Task): unknown;
    statusUpdate(update: Record<string, unknown>): unknown;
    artifactUpdate(update: Record<string, unknown>): unknown;
  };
  /** The JSON forms of a Task (what the task store keeps). */
  taskToJson(task: Task): unknown;
  taskFromJson(json: unknown): Task;
  /** A JSON-RPC "invalid params" style error (RequestMalformedError). */
  RequestMalformedError: new (message: string) => Error;
  ExtensionSupportRequiredError: new (message: string) => Error;
  /** A message the task cannot take (the SDK's answer to a message on a finished task). */
  UnsupportedOperationError: new (message: string) => Error;
  /** A CancelTask refused (A2A's TaskNotCancelableError). */
  TaskNotCancelableError: new (message: string) => Error;
}

/** Imports one SDK module; a string the compiler does not resolve, so it reads none of its types. */
const load = (path: string): Promise<any> => import(`@a2a-js/sdk${path}`);

/** Loads the SDK (the first A2A request does). */
export async function loadSdk(): Promise<A2aSdk> {
  const [root, server, express, errors] = await Promise.all([
    load(""),
    load("/server"),
    load("/server/express"),
    load("/errors"),
  ]);
  return {
    DefaultRequestHandler: server.DefaultRequestHandler,
    jsonRpcHandler: express.jsonRpcHandler,
    restHandler: express.restHandler,
    noAuthentication: express.UserBuilder.noAuthentication,
    AgentEvent: server.AgentEvent,
    taskToJson: (task) => root.Task.toJSON(task),
    taskFromJson: (json) => root.Task.fromJSON(json),
    RequestMalformedError: errors.RequestMalformedError,
    ExtensionSupportRequiredError: errors.ExtensionSupportRequiredError,
    UnsupportedOperationError: errors.UnsupportedOperationError,
    TaskNotCancelableError: errors.TaskNotCancelableError,
  };
}
