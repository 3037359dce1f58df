/**
 * The A2A events a task's turn publishes (the SDK's shapes: sdk.ts): the task itself, a status
 * update carrying an agent message (its a2a-x402 metadata and a data or text part), and the job's
 * output as a DataPart artifact. Part of your project: edit freely.
 */
import { randomUUID } from "node:crypto";
import {
  type A2aSdk,
  type EventBus,
  type Message,
  type Part,
  type Task,
  TaskState,
} from "./sdk.js";
import { ROLE_AGENT } from "./request.js";

export const dataPart = (value: unknown): Part => ({
  content: { $case: "data", value },
  metadata: {},
  filename: "",
  mediaType: "application/json",
});

export const textPart = (value: string): Part => ({
  content: { $case: "text", value },
  metadata: {},
  filename: "",
  mediaType: "text/plain",
});

/** An agent message of task `task`. */
export function agentMessage(
  task: Pick<Task, "id" | "contextId">,
  parts: Part[],
  metadata: Record<string, unknown> = {},
): Message {
  return {
    messageId: randomUUID(),
    contextId: task.contextId,
    taskId: task.id,
    role: ROLE_AGENT,
    parts,
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A job's output as an artifact: one DataPart. */
export const outputArtifact = (output: unknown, capability: string) => ({
  artifactId: randomUUID(),
  name: `${capability} output`,
  description: "",
  parts: [dataPart(output)],
  metadata: {},
  extensions: [],
});

/** What one turn publishes on its bus. */
export class TurnEvents {
  constructor(
    private readonly sdk: A2aSdk,
    readonly bus: EventBus,
    private readonly task: Pick<Task, "id" | "contextId">,
  ) {}

  /** The task as it is (the first event of every turn, as the SDK requires). */
  taskNow(task: Task): void {
    this.bus.publish(this.sdk.AgentEvent.task(task));
  }

  /** A new status, with an agent message of `parts` and `metadata` (a2a-x402's keys). */
  status(state: number, parts: Part[], metadata: Record<string, unknown> = {}): void {
    const message = agentMessage(this.task, parts, metadata);
    this.bus.publish(
      this.sdk.AgentEvent.statusUpdate({
        taskId: this.task.id,
        contextId: this.task.contextId,
        status: { state, message, timestamp: new Date().toISOString() },
        metadata,
      }),
    );
  }

  /** The job's output, as the task's one artifact. */
  output(output: unknown, capability: string): void {
    this.bus.publish(
      this.sdk.AgentEvent.artifactUpdate({
        taskId: this.task.id,
        contextId: this.task.contextId,
        artifact: outputArtifact(output, capability),
        append: false,
        lastChunk: true,
        metadata: {},
      }),
    );
  }

  /** The task as new: submitted, with the caller's message. */
  submitted(message: Message, metadata: Record<string, unknown>): Task {
    const task: Task = {
      id: this.task.id,
      contextId: this.task.contextId,
      status: {
        state: TaskState.submitted,
        message: undefined,
        timestamp: new Date().toISOString(),
      },
      artifacts: [],
      history: [message],
      metadata,
    };
    this.taskNow(task);
    return task;
  }
}
