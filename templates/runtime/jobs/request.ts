/**
 * The first steps of a job (spec section 4), before anything is paid or run: the request's own
 * shape, the capability, the input. Each failure is a 400 naming the field; what a message echoes
 * from the request is bounded, so a huge name or key list cannot blow up the answer or the log.
 * Part of your project: edit freely.
 */
import { formatAjvErrors } from "../ajv.js";
import { CapabilityError, ValidationError } from "../errors.js";
import { isObject } from "../ops/json-object.js";
import { characterCount, quote } from "../ops/text.js";
import type { AgentDefinition, Capability } from "../types.js";

export const SERVICE_VERSION = "1.0";
/** Longest job_id, in characters (code points, as the OpenAPI document's maxLength counts). */
export const MAX_JOB_ID_LENGTH = 256;
/** Deepest nesting accepted anywhere in a request body (objects and arrays). */
export const MAX_NESTING_DEPTH = 64;
/**
 * Default for MAX_DEADLINE_SECONDS: how far ahead a job's deadline may be. Agent jobs take minutes
 * to hours; a deadline further out is almost always a unit mistake (milliseconds sent as seconds)
 * or a way of saying "no deadline", which the spec does not have.
 */
export const MAX_DEADLINE_AHEAD_SECONDS = 7 * 24 * 3600;

/** What parseRequest checks against besides the body itself. */
export interface RequestLimits {
  /** Largest accepted deadline, in seconds from now (default MAX_DEADLINE_AHEAD_SECONDS). */
  maxDeadlineSeconds?: number;
  /** The current time in ms (default Date.now()). */
  nowMs?: number;
}

/** A checked job request (spec 2.3). */
export interface JobRequest {
  jobId: string;
  capability: string;
  input: Record<string, unknown>;
  deadline: number;
}

/** True when `value` nests objects/arrays deeper than `max` levels (iterative: no recursion to overflow). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  // Objects still to look into, and their depths (two stacks: no pair allocated per node).
  const nodes: object[] = [value];
  const depths: number[] = [0];
  while (nodes.length > 0) {
    const node = nodes.pop() as Record<string, unknown>;
    const depth = depths.pop()!;
    if (depth >= max) return true;
    for (const key in node) {
      if (!Object.hasOwn(node, key)) continue;
      const child = node[key];
      if (typeof child === "object" && child !== null) {
        nodes.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

const UNITS: Array<[string, number]> = [
  ["day", 86_400],
  ["hour", 3_600],
  ["minute", 60],
  ["second", 1],
];
const plural = (n: number, unit: string): string => `${n} ${unit}${n === 1 ? "" : "s"}`;

/** A whole number of seconds in the largest unit that divides it: 604800 -> "7 days". */
function exactDuration(seconds: number): string {
  const [unit, size] = UNITS.find(([, size]) => seconds % size === 0) ?? ["second", 1];
  return plural(seconds / size, unit);
}

/** Roughly how long `seconds` is: "about 75 years", "about 12 days". */
function roughDuration(seconds: number): string {
  const years = seconds / (365.25 * 86_400);
  if (years >= 1_000_000) return "more than a million years";
  if (years >= 2) return `about ${plural(Math.round(years), "year")}`;
  const [unit, size] = UNITS.find(([, size]) => seconds >= 2 * size) ?? ["second", 1];
  return `about ${plural(Math.round(seconds / size), unit)}`;
}

/**
 * Why `deadline` (Unix seconds) is implausibly far ahead, naming the likely unit mistake; undefined
 * when it is at most `maxAheadSeconds` from now. A deadline in the past is not this check's business.
 */
export function deadlineProblem(
  deadline: number,
  maxAheadSeconds: number,
  nowMs: number = Date.now(),
): string | undefined {
  const now = nowMs / 1000;
  if (deadline - now <= maxAheadSeconds) return undefined;
  const shown = quote(deadline, 40);
  const ahead = roughDuration(deadline - now);
  const asSeconds = deadline / 1000;
  if (Math.abs(asSeconds - now) <= maxAheadSeconds)
    return `deadline: ${shown} is ${ahead} from now; deadlines are Unix timestamps in SECONDS (this looks like milliseconds: use ${Math.floor(asSeconds)})`;
  const bound = exactDuration(maxAheadSeconds);
  return `deadline: ${shown} is more than ${bound} from now (MAX_DEADLINE_SECONDS), ${ahead}: send a Unix timestamp in seconds at most ${bound} ahead`;
}

/** Step 0: the request's own shape. Lists every problem, each naming its field. */
export function parseRequest(body: unknown, limits: RequestLimits = {}): JobRequest {
  if (!isObject(body))
    throw new ValidationError("request body must be a JSON object (spec 2.3 job request)");
  if (nestedDeeperThan(body, MAX_NESTING_DEPTH))
    throw new ValidationError(
      `request body is nested more than ${MAX_NESTING_DEPTH} levels deep; flatten task.input`,
    );
  const problems: string[] = [];
  const { service_version: version, job_id: jobId, task, deadline } = body;

  if (version === undefined)
    problems.push(
      `service_version: missing required field; this service supports "${SERVICE_VERSION}"`,
    );
  else if (version !== SERVICE_VERSION)
    problems.push(
      `service_version: unsupported version ${quote(version, 40)}; this service supports "${SERVICE_VERSION}"`,
    );

  if (jobId === undefined) problems.push("job_id: missing required field");
  else if (
    typeof jobId !== "string" ||
    jobId.length === 0 ||
    characterCount(jobId, MAX_JOB_ID_LENGTH) > MAX_JOB_ID_LENGTH
  )
    problems.push(`job_id: must be a non-empty string of at most ${MAX_JOB_ID_LENGTH} characters`);

  if (task === undefined) problems.push("task: missing required field");
  else if (!isObject(task)) problems.push("task: must be an object with `capability` and `input`");
  else {
    if (task.capability === undefined) problems.push("task.capability: missing required field");
    else if (typeof task.capability !== "string")
      problems.push("task.capability: must be a string");
    if (task.input === undefined) problems.push("task.input: missing required field");
    else if (!isObject(task.input)) problems.push("task.input: must be an object");
  }

  if (deadline === undefined)
    problems.push("deadline: missing required field (Unix timestamp in seconds)");
  else if (typeof deadline !== "number" || !Number.isFinite(deadline) || deadline <= 0)
    problems.push("deadline: must be a positive number (Unix timestamp in seconds)");
  else {
    const tooFar = deadlineProblem(
      deadline,
      limits.maxDeadlineSeconds ?? MAX_DEADLINE_AHEAD_SECONDS,
      limits.nowMs,
    );
    if (tooFar !== undefined) problems.push(tooFar);
  }

  if (problems.length > 0) throw new ValidationError(problems.join("; "));
  const t = task as { capability: string; input: Record<string, unknown> };
  return {
    jobId: jobId as string,
    capability: t.capability,
    input: t.input,
    deadline: deadline as number,
  };
}

/**
 * The one input field a request in plain text fills (an A2A message of text only; the agent card's
 * text/plain input mode): when the agent has exactly one capability and its input exactly one required
 * field, a string. Otherwise undefined: plain text then names no job.
 */
export function plainTextField(
  agent: AgentDefinition,
): { capability: string; field: string } | undefined {
  const all = Object.values(agent.capabilities);
  if (all.length !== 1) return undefined;
  const required = Object.entries(all[0]!.declaration.input_schema).filter(([, f]) => f.required);
  if (required.length !== 1 || required[0]![1].type !== "string") return undefined;
  return { capability: all[0]!.name, field: required[0]![0] };
}

/** Step 1: own keys only, so "constructor" or "__proto__" are unknown like any other name. */
export function findCapability(agent: AgentDefinition, name: string): Capability {
  if (Object.hasOwn(agent.capabilities, name)) return agent.capabilities[name]!;
  const names = Object.keys(agent.capabilities);
  const listed = names.slice(0, 50).map((n) => JSON.stringify(n));
  if (names.length > listed.length) listed.push(`and ${names.length - listed.length} more`);
  throw new CapabilityError(
    `unknown capability ${quote(name, 80)}; available: ${listed.length > 0 ? listed.join(", ") : "(none)"}`,
  );
}

/**
 * Step 2: validates the input, coercing it and filling in defaults in place, and returns it. The
 * input is the request's own freshly parsed JSON, which nothing else keeps, so it is not copied.
 */
export function validateInput(capability: Capability, input: Record<string, unknown>): unknown {
  if (!capability.validateInput(input))
    throw new ValidationError(formatAjvErrors(capability.validateInput.errors, "input"));
  return input;
}
