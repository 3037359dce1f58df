/**
 * A tiny structured logger: one JSON object per line, which log collectors read as-is.
 * debug/info go to stdout, warn/error to stderr. Level from LOG_LEVEL (default "info").
 * Part of your project: swap in pino or similar by implementing the Logger interface.
 */
import type { Logger } from "../types.js";

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && (LOG_LEVELS as readonly string[]).includes(value);
}

export interface LoggerOptions {
  /** Minimum level to print; unknown values fall back to "info". */
  level?: string;
  /** Fields added to every line. */
  fields?: Record<string, unknown>;
  /** Where lines go; defaults to stdout/stderr. */
  write?: (line: string, level: LogLevel) => void;
}

function defaultWrite(line: string, level: LogLevel): void {
  (level === "warn" || level === "error" ? process.stderr : process.stdout).write(line + "\n");
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const min = LOG_LEVELS.indexOf(isLogLevel(options.level) ? options.level : "info");
  const write = options.write ?? defaultWrite;
  const base = options.fields ?? {};

  const log = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (LOG_LEVELS.indexOf(level) < min) return;
    const entry = { time: new Date().toISOString(), level, msg: message, ...base, ...fields };
    // JSON.stringify escapes newlines, so an entry is always exactly one line.
    write(JSON.stringify(entry), level);
  };

  return {
    debug: (message, fields) => log("debug", message, fields),
    info: (message, fields) => log("info", message, fields),
    warn: (message, fields) => log("warn", message, fields),
    error: (message, fields) => log("error", message, fields),
    child: (fields) => createLogger({ ...options, fields: { ...base, ...fields } }),
  };
}
