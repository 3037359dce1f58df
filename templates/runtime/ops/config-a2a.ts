/**
 * The A2A transport's settings (a2a/, the `a2a` feature): A2A ("on", the default, or "off": no
 * POST /a2a, and no A2A in the agent card or /llms.txt) and A2A_DEADLINE_SECONDS (a task that
 * sends no deadline gets now + this, counted from its first turn: time to pay and to run).
 * Read in the core (config.ts) like MCP's, so a project without the feature still refuses a typo.
 * Part of your project: edit freely.
 */
import type { Reader } from "./settings.js";

/** Default A2A_DEADLINE_SECONDS: a paying agent's two turns plus the job. */
export const DEFAULT_A2A_DEADLINE_SECONDS = 300;

export interface A2aConfig {
  enabled: boolean;
  /** A2A_DEADLINE_SECONDS: a task's deadline is its first turn + this, unless it sends one. */
  deadlineSeconds: number;
}

export function resolveA2a(read: Reader, maxDeadlineSeconds: number): A2aConfig {
  const setting = read.fromEnv("A2A").value;
  if (setting !== undefined && setting !== "on" && setting !== "off")
    read.problems.push(
      `A2A is ${JSON.stringify(setting.slice(0, 40))}: set it to "off" (no POST /a2a) or "on" (the default)`,
    );
  const deadlineSeconds = read.count(undefined, "", "A2A_DEADLINE_SECONDS", {
    min: 1,
    max: maxDeadlineSeconds,
    fallback: Math.min(DEFAULT_A2A_DEADLINE_SECONDS, maxDeadlineSeconds),
    hint: `set it to a whole number of seconds from 1 to ${maxDeadlineSeconds} (MAX_DEADLINE_SECONDS); default ${DEFAULT_A2A_DEADLINE_SECONDS}`,
  });
  return { enabled: setting !== "off", deadlineSeconds };
}
