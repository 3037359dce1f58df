/**
 * A2A behind its routes (route.ts): the official SDK's JSON-RPC handler (POST /a2a) and its
 * HTTP+JSON (REST) handler (/a2a/rest: POST /message:send, GET /tasks/{id}...), both A2A 1.0 and 0.3
 * (`message/send`, `/v1/...`) through its compatibility layer, over ONE DefaultRequestHandler, with
 * the task store on the ledger (task-store.ts) and this agent's executor (executor.ts). Before the
 * SDK runs a SendMessage, on either binding, it is checked here, so nothing is offered or run for it
 * when refused:
 *   - a first turn naming no capability (plain text) is let through: the executor answers it with
 *     how to call this agent (help.ts), with or without the a2a-x402 extension, nothing run;
 *   - a first turn's DataPart {capability, input} must be one the capability accepts (request.ts);
 *   - paid: the caller must activate a2a-x402 (A2A-Extensions: the v0.2 or the v0.1 URI), and a
 *     second turn must carry `x402.payment.status: "payment-submitted"` and `x402.payment.payload`;
 *     sent with return_immediately, its job goes on the job queue (queued.ts), and without the
 *     `queue` feature it is refused (run in this request, it is charged only while its caller waits);
 *   - a second turn's payment must hold the task's claim: one task runs one job, paid once (claim.ts).
 * CancelTask on a task whose job is queued cancels that job first (never charged once cancelled).
 * Loaded, with the SDK, on the first A2A request. Part of your project: edit freely.
 */
import type { RequestHandler } from "express";
import { agentDescription } from "../discovery/agent-card.js";
import type { JobServices } from "../jobs/services.js";
import type { Logger } from "../types.js";
import { cancelRefusal, claimRefusal } from "./claim.js";
import { createExecutor } from "./executor.js";
import { followQueued, queuedJobOf } from "./queued.js";
import {
  asksForJob,
  deepTextProblem,
  requestProblem,
  ROLE_AGENT,
  ROLE_USER,
  storedJob,
  takesPlainText,
} from "./request.js";
import {
  type A2aSdk,
  type CallContext,
  loadSdk,
  type SendParams,
  type Task,
  TERMINAL_STATES,
} from "./sdk.js";
import { ledgerTaskStore, taskRecords } from "./task-store.js";
import { activatedUri, PAYLOAD_KEY, STATUS_KEY, X402_EXTENSION_URI } from "./x402.js";

/** The card the SDK's handler checks requests against (versions, modes); not the public card. */
function handlerCard(s: JobServices) {
  const binding = (protocolBinding: string, protocolVersion: string) => ({
    url: "",
    protocolBinding,
    protocolVersion,
  });
  return {
    name: s.agent.name,
    description: agentDescription(s.agent),
    version: s.agent.version,
    // The SDK answers a binding's version only when its card declares it.
    supportedInterfaces: ["JSONRPC", "HTTP+JSON"].flatMap((b) => [
      binding(b, "1.0"),
      binding(b, "0.3"),
    ]),
    // a2a-x402 is checked here (either URI activates it), not by the SDK (which knows one URI).
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    defaultInputModes: ["application/json"],
    defaultOutputModes: ["application/json"],
    skills: [],
  };
}

/** Longest messageId or contextId a message may have. */
const MAX_ID_CHARS = 256;

/** Why a SendMessage is refused before the SDK runs it (an SDK error to throw), or undefined. */
function refusal(
  s: JobServices,
  sdk: A2aSdk,
  params: SendParams,
  context: CallContext,
): Error | undefined {
  const message = params.message;
  if (!message) return undefined; // the SDK refuses it
  // Ids are kept with the task (its contextId in each of its messages): bounded, not as sent.
  if ([message.messageId, message.contextId].some((id) => String(id).length > MAX_ID_CHARS))
    return new sdk.RequestMalformedError(
      `messageId and contextId are ids of at most ${MAX_ID_CHARS} characters; nothing was run or charged`,
    );
  // A2A requires a message's parts (at least one): an empty message is no question to answer.
  if (Array.isArray(message.parts) && message.parts.length === 0)
    return new sdk.RequestMalformedError(
      "message.parts is empty: a message holds at least one part (a DataPart {capability, input} asks for a job); nothing was run or charged",
    );
  // A2A requires a role (0.3's parser refuses a message without one; 1.0's reads it as unspecified).
  if (message.role !== ROLE_USER && message.role !== ROLE_AGENT)
    return new sdk.RequestMalformedError(
      'message.role is required: ROLE_USER (0.3: "user") for a message you send; nothing was run or charged',
    );
  // A text part's JSON deeper than /execute takes: refused, as the same JSON in a data part is.
  const deep = deepTextProblem(message);
  if (deep !== undefined) return new sdk.RequestMalformedError(deep);
  // A first message asking for no job is answered with how to call this agent (help.ts).
  const plain = takesPlainText(s.gate !== undefined, context.requestedExtensions);
  if (!message.taskId && !asksForJob(s.agent, message, plain)) return undefined;
  if (s.gate) {
    const uri = activatedUri(context.requestedExtensions);
    if (!uri)
      return new sdk.ExtensionSupportRequiredError(
        `jobs here are paid with the a2a-x402 extension: activate it with the header A2A-Extensions: ${X402_EXTENSION_URI}; nothing was run or charged`,
      );
    context.addActivatedExtension(uri);
  }
  if (!message.taskId) {
    const problem = requestProblem(s.agent, message, s.config.maxDeadlineSeconds);
    return problem === undefined ? undefined : new sdk.RequestMalformedError(problem);
  }
  if (!s.gate) return undefined;
  const metadata = message.metadata ?? {};
  if (metadata[STATUS_KEY] !== "payment-submitted" || metadata[PAYLOAD_KEY] === undefined)
    return new sdk.RequestMalformedError(
      `a message on a task pays for its job: send x402.payment.status "payment-submitted" and the signed x402.payment.payload in its metadata; nothing was run or charged`,
    );
  if (params.configuration?.returnImmediately && !s.asyncJobs)
    return new sdk.RequestMalformedError(
      "a paying message waits for its job's result here (it is charged only while you are there to get it; this service has no job queue for long jobs: npm run add -- queue): send it without return_immediately; nothing was run or charged",
    );
  return undefined;
}

/** A task id that is not a string (the SDK would fail on it with an internal error): invalid params. */
function idRefusal(sdk: A2aSdk, id: unknown, field: string): Error | undefined {
  if (typeof id === "string") return undefined;
  return new sdk.RequestMalformedError(
    `${field} must be a task id (a string); nothing was run or charged`,
  );
}

/** The payment window of a task in dev mode without payment settings (X402_MAX_TIMEOUT_SECONDS's default). */
const DEFAULT_PAYMENT_WINDOW_SECONDS = 300;

/** The two bindings' Express handlers (both over the same request handler and its checks). */
export interface A2aEndpoint {
  /** JSON-RPC: a router serving POST /. */
  jsonRpc: RequestHandler;
  /** HTTP+JSON: a router serving /message:send, /tasks/{id}... (A2A 1.0) and /v1/... (0.3). */
  rest: RequestHandler;
}

export async function createA2aEndpoint(s: JobServices, logger: Logger): Promise<A2aEndpoint> {
  const sdk = await loadSdk();
  const records = taskRecords(s.ledger);
  const window = s.config.payment?.maxTimeoutSeconds ?? DEFAULT_PAYMENT_WINDOW_SECONDS;
  const follow = (task: Task) => followQueued(task, s.asyncJobs, storedJob(task)?.capability);
  const store = ledgerTaskStore(records, sdk, window, follow);
  const executor = createExecutor(s, sdk, logger);
  class CheckedRequestHandler extends sdk.DefaultRequestHandler {
    /**
     * A task whose job is queued: that job is cancelled first (or has ended: then not cancelable).
     * A task whose turn runs on another instance: refused once paid (claim.ts cancelRefusal).
     */
    override async cancelTask(params: { id: string }, context: CallContext): Promise<unknown> {
      const wrongId = idRefusal(sdk, params.id, "id");
      if (wrongId) throw wrongId;
      const task = await store.load(params.id, context);
      if (task && !TERMINAL_STATES.includes(task.status?.state ?? 0)) {
        const queued = queuedJobOf(task);
        if (queued && s.asyncJobs) await s.asyncJobs.cancel(queued);
        else if (!queued && !executor.runsHere(task.id)) {
          const refused = await cancelRefusal(records, sdk, task);
          if (refused) throw refused;
        }
      }
      return super.cancelTask(params, context);
    }

    override async getTask(params: { id: string }, context: CallContext): Promise<unknown> {
      const wrongId = idRefusal(sdk, params.id, "id");
      if (wrongId) throw wrongId;
      return super.getTask(params, context);
    }

    override async sendMessage(params: SendParams, context: CallContext): Promise<unknown> {
      const taskId = params.message?.taskId;
      const wrongId = taskId === undefined ? undefined : idRefusal(sdk, taskId, "message.taskId");
      if (wrongId) throw wrongId;
      const refused = refusal(s, sdk, params, context);
      if (refused) throw refused;
      // A paying turn: its payment must hold the task's claim (one task, one job: claim.ts).
      const message = params.message;
      const taken = s.gate && message?.taskId && (await claimRefusal(records, store, sdk, message));
      if (taken) throw taken;
      return super.sendMessage(params, context);
    }
  }
  // No bus is kept for an interrupted task: its next turn may come to another instance.
  const handler = new CheckedRequestHandler(
    handlerCard(s),
    store,
    executor,
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    { keepBusAliveStates: [] },
  );
  const options = {
    requestHandler: handler,
    userBuilder: sdk.noAuthentication,
    legacyCompat: { enabled: true },
  };
  return { jsonRpc: sdk.jsonRpcHandler(options), rest: sdk.restHandler(options) };
}
