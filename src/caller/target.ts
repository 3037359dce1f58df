/**
 * Which service `create-agent call <capability>` calls when no URL is given: AGENT_URL, else the local
 * server on PORT (from the environment, else a `PORT=` line in ./.env, else 3000). That is what a
 * generated project's `npm run call -- <capability>` relies on to reach its own local server.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { CallError } from "./errors.js";

export const DEFAULT_PORT = 3000;

export interface DefaultUrl {
  url: string;
  /** Where it came from, for messages: "AGENT_URL", "PORT", ".env PORT" or "the default port". */
  source: string;
}

export function defaultServiceUrl(env: NodeJS.ProcessEnv, cwd: string): DefaultUrl {
  const agentUrl = env.AGENT_URL?.trim();
  if (agentUrl) return { url: agentUrl, source: "AGENT_URL" };
  const fromEnv = env.PORT?.trim();
  if (fromEnv) return { url: localUrl(fromEnv, "PORT in the environment"), source: "PORT" };
  const dotenv = join(cwd, ".env");
  let text: string | undefined;
  try {
    text = readFileSync(dotenv, "utf8");
  } catch {
    text = undefined;
  }
  if (text !== undefined) {
    let port: string | undefined;
    try {
      port = parseEnv(text).PORT?.trim();
    } catch {
      port = /^\s*(?:export\s+)?PORT\s*=\s*["']?([^"'\s#]*)/m.exec(text)?.[1];
    }
    if (port) return { url: localUrl(port, `PORT in ${dotenv}`), source: ".env PORT" };
  }
  return { url: `http://localhost:${DEFAULT_PORT}`, source: "the default port" };
}

function localUrl(port: string, where: string): string {
  const n = Number(port);
  if (!/^\d+$/.test(port) || n < 1 || n > 65535)
    throw new CallError(
      "usage",
      `${where} is "${port}", not a port number (1-65535); fix it, or give the service URL: create-agent call <url> <capability>`,
    );
  return `http://localhost:${n}`;
}
