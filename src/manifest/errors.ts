/**
 * Problems found in a manifest, and the single error type that carries them.
 * Every problem names the file, a JSONPath-like location and (when known) a 1-based line:column,
 * so editors and terminals can jump straight to it.
 */

export interface ManifestProblem {
  /** Display name of the file, e.g. "agent.json" or a relative path. */
  file: string;
  /** JSONPath-like location from `$`, e.g. `$.capabilities.summarize.pricing.amount`. Empty for file-level problems. */
  path: string;
  line?: number;
  column?: number;
  message: string;
}

/** `<file>:<line>:<column>: <path>: <message>`; location parts are omitted when unknown. */
export function formatProblem(problem: ManifestProblem): string {
  const location =
    problem.line !== undefined && problem.column !== undefined ? `:${problem.line}:${problem.column}` : "";
  const path = problem.path === "" ? "" : ` ${problem.path}:`;
  return `${problem.file}${location}:${path} ${problem.message}`;
}

export class ManifestError extends Error {
  readonly problems: ManifestProblem[];

  constructor(problems: ManifestProblem[]) {
    // The message is the whole user-facing report: one problem per line, nothing else.
    super(problems.map(formatProblem).join("\n"));
    this.name = "ManifestError";
    this.problems = problems;
  }
}

export type PathSegment = string | number;

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `["capabilities", "../x", "input_schema", 2]` -> `$.capabilities["../x"].input_schema[2]`. */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = "$";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) out += `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}
