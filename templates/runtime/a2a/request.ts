/**
 * What an A2A message asks for: a DataPart `{capability, input}` (the /execute body's `task`), or a
 * text part holding that JSON, or (an agent of one capability whose input has one required field, a
 * string: jobs/request.ts plainTextField) plain text, taken as that field; optionally the message
 * metadata's `deadline` (Unix seconds). Checked with the capability's
 * generated validator before any offer is made or anything runs; a wrong part is refused with a
 * message naming the capabilities. Part of your project: edit freely.
 */
import { isDeepStrictEqual } from "node:util";
import { AgentError } from "../errors.js";
import {
  deadlineProblem,
  findCapability,
  MAX_NESTING_DEPTH,
  nestedDeeperThan,
  plainTextField,
  SERVICE_VERSION,
  validateInput,
} from "../jobs/request.js";
import { isObject } from "../ops/json-object.js";
import { quote } from "../ops/text.js";
import type { AgentDefinition } from "../types.js";
import type { Message, Part, Task } from "./sdk.js";
import { activatedUri } from "./x402.js";

/**
 * A task's job, as its first turn fixed it: kept in the task's metadata under REQUEST_KEY, all but
 * its input, which the first turn's data part (in the task's history) holds: kept once, not twice.
 */
export interface TaskJob {
  capability: string;
  input: Record<string, unknown>;
  deadline: number;
  /** Absolute URL of POST /a2a when the offer was made (the resource paid for). */
  resourceUrl: string;
}

/** The task metadata key of its TaskJob. */
export const REQUEST_KEY = "job";

/** A Message's role when a caller sent it (the SDK's ROLE_USER). */
export const ROLE_USER = 1;
/** A Message's role when this agent sent it (the SDK's ROLE_AGENT). */
export const ROLE_AGENT = 2;

/** What a TextPart holding JSON nested deeper than /execute accepts reads as (refused: deepTextProblem). */
const TOO_DEEP = Symbol("too deep");
/** TextParts already read (a part is read several times per request). */
const readTexts = new WeakMap<Part, unknown>();

/** A TextPart's text; undefined for any other part. */
const textOf = (part: Part): string | undefined =>
  part.content?.$case === "text" && typeof part.content.value === "string"
    ? part.content.value
    : undefined;

/** A TextPart's text as JSON when it is an object, TOO_DEEP when nested too deep; else undefined. */
function readText(part: Part): unknown {
  const sent = textOf(part);
  if (sent === undefined) return undefined;
  if (readTexts.has(part)) return readTexts.get(part);
  const text = sent.trim();
  let value: unknown;
  if (text.startsWith("{"))
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined; // plain text: no job asked for
    }
  if (nestedDeeperThan(value, MAX_NESTING_DEPTH)) value = TOO_DEEP;
  readTexts.set(part, value);
  return value;
}

/**
 * A TextPart's text as JSON, when it is an object (`{"capability": ..., "input": ...}`, for clients
 * that send text only) no deeper than /execute accepts; else undefined. The body's own checks
 * (size, nesting) saw only a string here, so the depth is checked on what the text holds.
 */
function textValue(part: Part): unknown {
  const value = readText(part);
  return value === TOO_DEEP ? undefined : value;
}

/** Why a message's text part is refused: it holds JSON nested deeper than /execute accepts; or undefined. */
export function deepTextProblem(message: Message): string | undefined {
  if (!(message.parts ?? []).some((part) => readText(part) === TOO_DEEP)) return undefined;
  return `a text part holds JSON nested more than ${MAX_NESTING_DEPTH} levels deep (POST /execute refuses the same); flatten the input; nothing was run or charged`;
}

/** A DataPart's value naming a capability (as a string), or a TextPart's holding one as JSON; else undefined. */
function namedValue(part: Part): Record<string, unknown> | undefined {
  const value = part.content?.$case === "data" ? part.content.value : textValue(part);
  return isObject(value) && typeof value.capability === "string" ? value : undefined;
}

/** Whether `part` is a DataPart naming a capability (a job asked for). */
export const namesCapabilityPart = (part: Part): boolean => namedValue(part) !== undefined;

/** The part of `message` its job is read from: its first DataPart with a capability and an input. */
export function jobPart(message: Message): Part | undefined {
  return (message.parts ?? []).find((part) => isObject(namedValue(part)?.input));
}

/** What a message names, if one of its parts is a DataPart with a capability and an input. */
function dataRequest(
  message: Message,
): { capability: string; input: Record<string, unknown> } | undefined {
  const value = namedValue(jobPart(message) ?? {});
  return value && { capability: value.capability as string, input: value.input as never };
}

/**
 * Whether `message` names a capability (a DataPart with a string `capability`): a job asked for,
 * checked by requestProblem.
 */
export function namesCapability(message: Message): boolean {
  return (message.parts ?? []).some(namesCapabilityPart);
}

/** A message's text parts, joined by newlines, when it has some and they are plain text (not JSON-like). */
function plainText(message: Message): string | undefined {
  const texts = (message.parts ?? []).map(textOf).filter((t) => t !== undefined);
  const text = texts.join("\n");
  const trimmed = text.trim();
  return trimmed === "" || trimmed.startsWith("{") ? undefined : text;
}

/**
 * Whether plain text may ask for a job on this call: always in dev mode; with payments on, only when
 * the caller activated a2a-x402. A client that did not is no paying client (a generic one, a probe):
 * it gets the help message saying how to pay, not an error.
 */
export const takesPlainText = (paid: boolean, requested: Iterable<string> | undefined): boolean =>
  !paid || activatedUri(requested) !== undefined;

/**
 * What a first turn asks for: its job part's, else (a message naming no capability, `plain`: see
 * takesPlainText) its plain text as the one text field of an agent of one capability
 * (plainTextField); else undefined.
 */
function askedJob(
  agent: AgentDefinition,
  message: Message,
  plain = true,
): { capability: string; input: Record<string, unknown> } | undefined {
  if (namesCapability(message)) return dataRequest(message);
  if (!plain) return undefined;
  const field = plainTextField(agent);
  const text = field && plainText(message);
  return field && text !== undefined
    ? { capability: field.capability, input: { [field.field]: text } }
    : undefined;
}

/**
 * Whether a first turn asks for a job (checked by requestProblem): it names a capability, or it is
 * plain text this agent takes (askedJob). Any other (plain text to an agent of several capabilities,
 * as a generic A2A client or a conformance probe sends) is answered with how to call it (help.ts).
 */
export const asksForJob = (agent: AgentDefinition, message: Message, plain = true): boolean =>
  namesCapability(message) || askedJob(agent, message, plain) !== undefined;

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
  const asked = askedJob(agent, message);
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
export function taskJob(
  agent: AgentDefinition,
  message: Message,
  deadlineSeconds: number,
  resourceUrl: string,
): TaskJob {
  const asked = askedJob(agent, message)!;
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

/**
 * What a task's metadata keeps of its job (REQUEST_KEY): all but its input (see TaskJob), which its
 * first turn's data part holds; a job asked for in plain text keeps its input here (no data part has it).
 */
export function keptJob(job: TaskJob, first: Message): TaskJob | Omit<TaskJob, "input"> {
  if (!jobPart(first)) return job;
  const { input: _input, ...kept } = job;
  return kept;
}

/** The caller's message a task began with (the first of its history sent by a user). */
export const firstTurn = (task: Pick<Task, "history">): Message | undefined =>
  task.history?.find((message) => message.role === ROLE_USER);

/** A task's job, read back from its metadata and its first turn (undefined when it has none). */
export function storedJob(task: Pick<Task, "metadata" | "history">): TaskJob | undefined {
  const job = task.metadata?.[REQUEST_KEY];
  if (!isObject(job) || typeof job.capability !== "string") return undefined;
  if (typeof job.deadline !== "number" || typeof job.resourceUrl !== "string") return undefined;
  const { capability, deadline, resourceUrl } = job;
  // A job asked for in plain text (keptJob), or a task kept by an earlier version, holds its input here.
  if (isObject(job.input)) return { capability, input: job.input, deadline, resourceUrl };
  const first = firstTurn(task);
  const asked = first && dataRequest(first);
  if (asked?.capability !== capability) return undefined;
  return { capability, input: asked.input, deadline, resourceUrl };
}
