/**
 * A project's .env, read as its server's loader (process.loadEnvFile) reads it: used by `dev:paid` (which
 * settings it overrides) and by `smoke` (what the seller configured; `--settings` names another file, such
 * as the .env.production that compose.yaml gives the instances). Shared by src/cli and src/caller,
 * so it sits below both.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseEnv } from "node:util";

/** The project's .env (or `name`, relative to `root`), parsed as the server's loader reads it; {} without one. */
export function readDotEnv(root: string, name = ".env"): Record<string, string> {
  const file = resolve(root, name);
  if (!existsSync(file)) return {};
  try {
    return parseEnv(readFileSync(file, "utf8")) as Record<string, string>;
  } catch {
    return {};
  }
}
