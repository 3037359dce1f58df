/**
 * The A2A transport's settings (a2a/, the `a2a` feature): A2A ("on", the default, or "off": no
 * POST /a2a nor /a2a/rest, and no A2A in the agent card or /llms.txt) and A2A_DEADLINE_SECONDS (a task that
 * sends no deadline gets now + this, counted from its first turn: time to pay and to run), and
 * A2A_TASK_MEMORY_BYTES (most bytes of tasks the in-memory ledger keeps, without REDIS_URL; the soonest to
 * expire go first when full: ledger/memory-records.ts).
 * Read in the core (config.ts) like MCP's, so a project without the feature still refuses a typo.
 * Part of your project: edit freely.
 */
import type { Reader } from "./settings.js";

/** Default A2A_DEADLINE_SECONDS: a paying agent's two turns plus the job. */
export const DEFAULT_A2A_DEADLINE_SECONDS = 300;
/** Default A2A_TASK_MEMORY_BYTES: 64 MiB. */
export const DEFAULT_A2A_TASK_MEMORY_BYTES = 64 * 1024 * 1024;

export interface A2aConfig {
  enabled: boolean;
  /** A2A_DEADLINE_SECONDS: a task's deadline is its first turn + this, unless it sends one. */
  deadlineSeconds: number;
  /** A2A_TASK_MEMORY_BYTES: most bytes of task records the in-memory ledger keeps. */
  taskMemoryBytes: number;
}

export function resolveA2a(read: Reader, maxDeadlineSeconds: number): A2aConfig {
  return {
    enabled: read.onOff("A2A", "no POST /a2a"),
    deadlineSeconds: read.deadline(
      "A2A_DEADLINE_SECONDS",
      DEFAULT_A2A_DEADLINE_SECONDS,
      maxDeadlineSeconds,
    ),
    taskMemoryBytes: read.count(undefined, "", "A2A_TASK_MEMORY_BYTES", {
      min: 65_536,
      fallback: DEFAULT_A2A_TASK_MEMORY_BYTES,
      hint: `set it to a whole number of bytes, at least 65536 (default ${DEFAULT_A2A_TASK_MEMORY_BYTES})`,
    }),
  };
}
