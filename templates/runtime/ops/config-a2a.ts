/**
 * The A2A transport's settings (a2a/, the `a2a` feature): A2A ("on", the default, or "off": no
 * POST /a2a nor /a2a/rest, and no A2A in the agent card or /llms.txt) and A2A_DEADLINE_SECONDS (a task that
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
  return {
    enabled: read.onOff("A2A", "no POST /a2a"),
    deadlineSeconds: read.deadline(
      "A2A_DEADLINE_SECONDS",
      DEFAULT_A2A_DEADLINE_SECONDS,
      maxDeadlineSeconds,
    ),
  };
}
