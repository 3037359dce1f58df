/**
 * A project's .env, read as its server's loader (process.loadEnvFile) reads it: used by `dev:paid` (which
 * settings it overrides) and by `smoke` (what the seller configured). Shared by src/cli and src/caller,
 * so it sits below both.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";

/** The project's .env, parsed as the server's loader reads it; {} without one. */
export function readDotEnv(root: string): Record<string, string> {
  const file = join(root, ".env");
  if (!existsSync(file)) return {};
  try {
    return parseEnv(readFileSync(file, "utf8")) as Record<string, string>;
  } catch {
    return {};
  }
}
