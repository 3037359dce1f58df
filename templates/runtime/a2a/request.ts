/**
 * What an A2A message asks for: a DataPart `{capability, input}` (the /execute body's `task`),
 * optionally the message metadata's `deadline` (Unix seconds). Checked with the capability's
 * generated validator before any offer is made or anything runs; a wrong part is refused with a
 * message naming the capabilities. Part of your project: edit freely.
 */
import { isDeepStrictEqual } from "node:util";
import { AgentError } from "../errors.js";
import {
  deadlineProblem,
  findCapability,
  SERVICE_VERSION,
  validateInput,
} from "../jobs/request.js";
import { isObject } from "../ops/json-object.js";
import { quote } from "../ops/text.js";
import type { AgentDefinition } from "../types.js";
import type { Message } from "./sdk.js";

/** A task's job, as its first turn fixed it (kept in the task's metadata under REQUEST_KEY). */
export interface TaskJob {
  capability: string;
  input: Record<string, unknown>;
  deadline: number;
  /** Absolute URL of POST /a2a when the offer was made (the resource paid for). */
  resourceUrl: string;
}

/** The task metadata key of its TaskJob. */
export const REQUEST_KEY = "job";

/** What a message names, if one of its parts is a DataPart with a capability and an input. */
function dataRequest(
  message: Message,
): { capability: string; input: Record<string, unknown> } | undefined {
  for (const part of message.parts ?? []) {
    const value = part.content?.$case === "data" ? part.content.value : undefined;
    if (isObject(value) && typeof value.capability === "string" && isObject(value.input))
      return { capability: value.capability, input: value.input };
  }
  return undefined;
}

/**
 * Whether `message` names a capability (a DataPart with a string `capability`): a job asked for,
 * checked by requestProblem. A message naming none (plain text, as a generic A2A client or a
 * conformance probe sends) is answered with how to call this agent instead (help.ts).
 */
export function namesCapability(message: Message): boolean {
  return (message.parts ?? []).some((part) => {
    const value = part.content?.$case === "data" ? part.content.value : undefined;
    return isObject(value) && typeof value.capability === "string";
  });
}

function capabilityList(agent: AgentDefinition): string {
  const names = Object.keys(agent.capabilities);
  const listed = names.slice(0, 50).map((n) => quote(n, 80));
  return listed.join(", ") + (names.length > listed.length ? ", ..." : "");
}

/**
 * Why `message` is no job of this agent (a sentence to answer with), or undefined when it names a
 * capability and an input that capability accepts, and a deadline (metadata, optional) at most
 * `maxDeadlineSeconds` ahead, as POST /execute checks it. The input is validated on a copy.
 */
export function requestProblem(
  agent: AgentDefinition,
  message: Message,
  maxDeadlineSeconds: number,
): string | undefined {
  const asked = dataRequest(message);
  if (!asked)
    return `send a data part {"capability": <name>, "input": {...}}; capabilities: ${capabilityList(agent)}; nothing was run or charged`;
  const deadline: unknown = message.metadata?.deadline;
  if (deadline !== undefined) {
    const problem =
      typeof deadline !== "number" || !Number.isFinite(deadline) || deadline <= 0
        ? "metadata.deadline: must be a positive number (Unix timestamp in seconds)"
        : deadlineProblem(deadline, maxDeadlineSeconds);
    if (problem !== undefined) return `${problem}; nothing was run or charged`;
  }
  try {
    const capability = findCapability(agent, asked.capability);
    validateInput(capability, structuredClone(asked.input));
  } catch (err) {
    if (err instanceof AgentError) return `${err.message}; nothing was run or charged`;
    throw err;
  }
  return undefined;
}

/** The job a first turn asks for (its request already checked by requestProblem). */
export function taskJob(message: Message, deadlineSeconds: number, resourceUrl: string): TaskJob {
  const asked = dataRequest(message)!;
  const sent = message.metadata?.deadline;
  const deadline =
    typeof sent === "number" ? sent : Math.floor(Date.now() / 1000) + deadlineSeconds;
  return { ...asked, deadline, resourceUrl };
}

/** The /execute body of a task's job (its job_id: the task's id). */
export const jobBody = (taskId: string, job: TaskJob) => ({
  service_version: SERVICE_VERSION,
  job_id: taskId,
  task: { capability: job.capability, input: structuredClone(job.input) },
  deadline: job.deadline,
});

/**
 * Why a paying turn may not run its task's job, when it asks for another one: a data part naming a
 * capability or an input other than the first turn's (the job the offer priced). A paying turn
 * with no data part, or the same one again, pays for the task's job.
 */
export function changedRequest(message: Message, job: TaskJob): string | undefined {
  if (!namesCapability(message)) return undefined;
  const asked = dataRequest(message);
  const same = { capability: job.capability, input: job.input };
  if (asked && isDeepStrictEqual(asked, same)) return undefined;
  return `this message asks for another job than its task's first turn (${quote(job.capability, 80)} with that turn's input): the offer paid for is that job's; nothing was run or charged; pay with no data part (or the same one), or send the other job as a new task`;
}

/** A task's job, read back from its metadata (undefined when it has none). */
export function storedJob(metadata: Record<string, unknown> | undefined): TaskJob | undefined {
  const job = metadata?.[REQUEST_KEY];
  if (!isObject(job) || typeof job.capability !== "string" || !isObject(job.input))
    return undefined;
  if (typeof job.deadline !== "number" || typeof job.resourceUrl !== "string") return undefined;
  return job as unknown as TaskJob;
}
