/**
 * A tiny structured logger: one JSON object per line, which log collectors read as-is.
 * debug/info go to stdout, warn/error to stderr. Level from LOG_LEVEL (default "info").
 *
 * Whatever is logged, a line stays one bounded line and logging never throws: strings are clipped,
 * deep or huge structures are cut (saying what was cut), BigInts become strings, cycles become
 * "[Circular]", Errors become { name, message, stack } (log-sanitize.ts).
 * Part of your project: swap in pino or similar by implementing the Logger interface.
 */
import type { Logger } from "../types.js";
import {
  type Budget,
  clipString,
  MAX_KEY,
  MAX_KEYS,
  MAX_NODES,
  MAX_STRING,
  MAX_TOTAL_CHARS,
  sanitize,
} from "./log-sanitize.js";
import { clip, escapeLineBreakers } from "./text.js";

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

let isoMs = Number.NaN;
let iso = "";
/** new Date().toISOString(), made once per millisecond (a busy server writes many lines in one). */
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    iso = new Date(now).toISOString();
  }
  return iso;
}

/**
 * The line of an entry whose fields are all short strings, numbers, booleans, null or undefined
 * (every job's "job finished" line): exactly what formatLine writes for it, without copying the
 * fields through sanitize(). Undefined when an entry needs the full treatment.
 */
function plainLine(
  level: LogLevel,
  message: string,
  base: Record<string, unknown>,
  fields: Record<string, unknown> | undefined,
): string | undefined {
  if (typeof message !== "string" || message.length > MAX_STRING) return undefined;
  const entry: Record<string, unknown> = { time: isoNow(), level, msg: message };
  let chars = message.length;
  let count = 0;
  for (const source of [base, fields]) {
    if (!source) continue;
    for (const key in source) {
      if (!Object.hasOwn(source, key)) continue;
      const value = source[key];
      switch (typeof value) {
        case "string":
          if (value.length > MAX_STRING) return undefined;
          chars += value.length;
          break;
        case "number":
        case "boolean":
        case "undefined":
          break;
        case "object":
          if (value !== null) return undefined;
          break;
        default:
          return undefined;
      }
      if (key.length > MAX_KEY || ++count > MAX_KEYS) return undefined;
      // time, level and msg are the logger's own: a field cannot overwrite them.
      entry[key === "time" || key === "level" || key === "msg" ? `field_${key}` : key] = value;
    }
  }
  if (chars > MAX_TOTAL_CHARS) return undefined;
  return escapeLineBreakers(JSON.stringify(entry));
}

/** The entry as one JSON line: no raw \n, \r, U+2028, U+2029 or U+0085 anywhere in it. */
function formatLine(
  level: LogLevel,
  message: string,
  base: Record<string, unknown>,
  fields: Record<string, unknown> | undefined,
): string {
  const budget: Budget = { nodes: MAX_NODES, chars: MAX_TOTAL_CHARS };
  try {
    const entry: Record<string, unknown> = {
      time: isoNow(),
      level,
      msg: clipString(String(message), budget),
    };
    const extra = sanitize({ ...base, ...fields }, 0, new Set(), budget);
    if (typeof extra === "object" && extra !== null && !Array.isArray(extra)) {
      for (const [key, item] of Object.entries(extra)) {
        // time, level and msg are the logger's own: a field cannot overwrite them.
        if (key === "time" || key === "level" || key === "msg") entry[`field_${key}`] = item;
        else entry[key] = item;
      }
    }
    // JSON.stringify escapes \n and \r but leaves U+2028, U+2029 and U+0085 raw: escape those too.
    return escapeLineBreakers(JSON.stringify(entry));
  } catch (err) {
    // Should not happen (the entry is plain data by now), but a log call must never throw.
    return escapeLineBreakers(
      JSON.stringify({
        time: new Date().toISOString(),
        level,
        msg: clip(String(message), MAX_STRING),
        log_error: clip(err instanceof Error ? err.message : String(err), MAX_STRING),
      }),
    );
  }
}

/**
 * stdout lines waiting for the end of this turn of the event loop: a busy server then writes many jobs'
 * lines with one write (a pipe or file write is a synchronous system call each on Linux). Answers wait
 * for the write that carries their job's line (afterLogs), so a log reader that sees an answer sees its
 * line too. A stderr line first writes what stdout has waiting, so the two keep their order; the rest
 * is written when the process exits (a SIGKILL loses at most one turn of lines).
 */
let pendingStdout = "";
let afterFlush: Array<() => void> = [];
let flushOnExit = false;

function flushStdout(): void {
  if (pendingStdout !== "") {
    const out = pendingStdout;
    pendingStdout = "";
    process.stdout.write(out);
  }
  const waiting = afterFlush;
  afterFlush = [];
  for (const send of waiting) send();
}

/**
 * Runs `send` once every line logged so far is written: at once when none is waiting, else right after
 * the write that carries them (in this same turn of the event loop). The app sends answers through it.
 */
export function afterLogs(send: () => void): void {
  if (pendingStdout === "") send();
  else afterFlush.push(send);
}

function defaultWrite(line: string, level: LogLevel): void {
  if (level === "warn" || level === "error") {
    flushStdout();
    process.stderr.write(line + "\n");
    return;
  }
  if (pendingStdout === "") {
    setImmediate(flushStdout);
    if (!flushOnExit) {
      flushOnExit = true;
      process.on("exit", flushStdout);
    }
  }
  pendingStdout += line + "\n";
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const min = LOG_LEVELS.indexOf(isLogLevel(options.level) ? options.level : "info");
  return makeLogger(min, options.write ?? defaultWrite, options.fields ?? {});
}

/** A logger at level index `min` adding `base` to every line (children merge theirs in). */
function makeLogger(
  min: number,
  write: (line: string, level: LogLevel) => void,
  base: Record<string, unknown>,
): Logger {
  const log = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (LOG_LEVELS.indexOf(level) < min) return;
    let line: string | undefined;
    try {
      line = plainLine(level, message, base, fields);
    } catch {
      line = undefined; // a throwing getter: formatLine describes it
    }
    write(line ?? formatLine(level, message, base, fields), level);
  };

  return {
    debug: (message, fields) => log("debug", message, fields),
    info: (message, fields) => log("info", message, fields),
    warn: (message, fields) => log("warn", message, fields),
    error: (message, fields) => log("error", message, fields),
    child: (fields) => makeLogger(min, write, { ...base, ...fields }),
  };
}
