/**
 * How settings are read: an option passed to createApp() wins over its environment variable, and
 * every problem is collected (not thrown) so the server can report them all at once.
 * Part of your project: edit freely.
 */
import { redactUrl } from "./redact.js";

/**
 * The exit code of a start refused for a reason that may pass by itself (a facilitator that did not answer):
 * EX_TEMPFAIL of sysexits.h, so a process manager can tell it from a configuration error (exit 1) and
 * restart after a delay (systemd: Restart=on-failure, RestartSec=10s, RestartPreventExitStatus=1).
 */
export const TRANSIENT_EXIT_CODE = 75;

/** Every configuration problem, one per line; `transient`: a start refused for now (see TRANSIENT_EXIT_CODE). */
export class ConfigError extends Error {
  constructor(
    readonly problems: string[],
    readonly transient = false,
  ) {
    const headline = transient
      ? `Cannot start yet (a transient failure: exit ${TRANSIENT_EXIT_CODE}, try again later):`
      : "Invalid configuration:";
    super(`${headline}\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

export interface Setting {
  value: string | undefined;
  name: string;
}

/** Reads settings (option first, then env) and collects problems instead of throwing. */
export class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Record<string, string | undefined>) {}

  /** The names of the environment's set (non-empty) variables. */
  names(): string[] {
    return Object.keys(this.env).filter((name) => this.fromEnv(name).value !== undefined);
  }

  /** Empty env values (`PAY_TO=` in a .env file) count as unset. */
  fromEnv(envName: string): Setting {
    const value = this.env[envName];
    return { value: value === "" ? undefined : value, name: envName };
  }

  text(option: string | undefined, optionName: string, envName: string): Setting {
    return option !== undefined
      ? { value: option, name: `option ${optionName}` }
      : this.fromEnv(envName);
  }

  /** A whole number in [min, max]; `fallback` when unset. */
  count(
    option: number | undefined,
    optionName: string,
    envName: string,
    range: { min: number; max?: number; fallback: number; hint: string },
  ): number {
    const s =
      option !== undefined
        ? { value: option, name: `option ${optionName}` }
        : this.fromEnv(envName);
    if (s.value === undefined) return range.fallback;
    const n = typeof s.value === "number" ? s.value : /^\d+$/.test(s.value) ? Number(s.value) : NaN;
    if (Number.isSafeInteger(n) && n >= range.min && n <= (range.max ?? Number.MAX_SAFE_INTEGER))
      return n;
    this.problems.push(`${s.name} is ${JSON.stringify(s.value)}: ${range.hint}`);
    return range.fallback;
  }

  /** An on/off switch, on by default: false only for "off"; any other value than "on" is a problem. */
  onOff(envName: string, offMeans: string): boolean {
    const value = this.fromEnv(envName).value;
    if (value !== undefined && value !== "on" && value !== "off")
      this.problems.push(
        `${envName} is ${JSON.stringify(value.slice(0, 40))}: set it to "off" (${offMeans}) or "on" (the default)`,
      );
    return value !== "off";
  }

  /** A transport's default job deadline in seconds: 1 to `max` (MAX_DEADLINE_SECONDS), else `fallback`. */
  deadline(envName: string, fallback: number, max: number): number {
    return this.count(undefined, "", envName, {
      min: 1,
      max,
      fallback: Math.min(fallback, max),
      hint: `set it to a whole number of seconds from 1 to ${max} (MAX_DEADLINE_SECONDS); default ${fallback}`,
    });
  }

  /**
   * An http(s) URL, or undefined. `secret`: do not repeat the value (RPC URLs often embed an API key);
   * a value holding user info or a query is never repeated either, and a URL is shown as redactUrl shows it.
   */
  url(s: Setting, what: string, secret = false): string | undefined {
    if (s.value === undefined) return undefined;
    if (URL.canParse(s.value) && /^https?:$/.test(new URL(s.value).protocol)) return s.value;
    const hidden = secret || /[@?]/.test(s.value);
    const written = s.value.endsWith("/") ? (u: string) => u : (u: string) => u.replace(/\/$/, "");
    const shown = hidden
      ? "not an http(s) URL"
      : JSON.stringify(URL.canParse(s.value) ? written(redactUrl(s.value)) : s.value);
    this.problems.push(`${s.name} is ${shown}: set it to ${what}`);
    return undefined;
  }
}
