// .env.example documents every setting the runtime reads, so a seller reading it finds each one
// (HOST, TRUST_PROXY, CONSOLE, ...). The list is derived from the runtime's sources (every read of a
// setting: Reader.fromEnv/text/count, their wrappers, `env.NAME`), and the scan itself is checked
// against what resolveConfig really reads, so neither can drift silently.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../templates/runtime/config.js";
import { PAY_TO } from "./helpers.js";

const RUNTIME = join(import.meta.dirname, "../../templates/runtime");
const ENV_EXAMPLE = join(import.meta.dirname, "../../templates/project/_env.example.hbs");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(join(dir, e.name))
      : e.name.endsWith(".ts")
        ? [readFileSync(join(dir, e.name), "utf8")]
        : [],
  );
}

const NAME = "[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*";
const READS = [
  new RegExp(`fromEnv\\(\\s*"(${NAME})"`, "g"), // read.fromEnv("HOST")
  new RegExp(`\\.(?:onOff|deadline)\\(\\s*"(${NAME})"`, "g"), // read.onOff("MCP", ...), read.deadline("A2A_DEADLINE_SECONDS", ...)
  new RegExp(`\\w+\\(\\s*[^,()"[\\]]+,\\s*"[^"]*",\\s*"(${NAME})"`, "g"), // read.text(option, "name", "PAY_TO"), count(...)
  new RegExp(`\\benv\\.(${NAME})\\b`, "g"), // env.CONSOLE, process.env.NODE_ENV
  new RegExp(`settings: \\[([^\\]]*)\\]`, "g"), // FAMILY_NAMES' and the optional services' settings lists
];

/** Every setting name the runtime's sources read. */
function settingsRead(): Set<string> {
  const names = new Set<string>();
  for (const text of sources(RUNTIME))
    for (const pattern of READS)
      for (const match of text.matchAll(pattern))
        for (const name of match[1]!.matchAll(new RegExp(`(?<![\\w_])${NAME}(?![\\w])`, "g")))
          names.add(name[0]);
  return names;
}

/** The names .env.example mentions as settings (`NAME=` lines, commented out or not). */
function documented(): Set<string> {
  const text = readFileSync(ENV_EXAMPLE, "utf8");
  return new Set([...text.matchAll(new RegExp(`^#? ?(${NAME})=`, "gm"))].map((m) => m[1]!));
}

describe(".env.example", () => {
  it("documents every setting the runtime reads", () => {
    const missing = [...settingsRead()].filter((name) => !documented().has(name));
    expect(missing, "settings the runtime reads that .env.example does not document").toEqual([]);
  });

  it("the scan finds what resolveConfig really reads (and the names a seller looks for)", () => {
    const read = new Set<string>();
    const env = new Proxy(
      {
        PAY_TO,
        X402_NETWORK: "base-sepolia",
        X402_SETTLER_KEY: `0x${"1".repeat(64)}`,
        X402_RPC_URL: "http://127.0.0.1:1",
      } as Record<string, string | undefined>,
      {
        get(target, key) {
          if (typeof key === "string") read.add(key);
          return target[key as string];
        },
      },
    );
    resolveConfig({ env });
    const scanned = settingsRead();
    // A per-network setting is its global one with the network's suffix (X402_RPC_URL_BASE_SEPOLIA).
    const global = (name: string) => name.replace(/_BASE_SEPOLIA$/, "");
    expect([...read].filter((name) => !scanned.has(global(name)))).toEqual([]);
    for (const name of [
      "HOST",
      "TRUST_PROXY",
      "CONSOLE",
      "PORT",
      "PAY_TO",
      "X402_NETWORKS",
      "NODE_ENV",
    ])
      expect(scanned.has(name), name).toBe(true);
  });
});
