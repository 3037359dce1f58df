// startServer's refusal to start, observed: process.exit and stderr stubbed, it must exit 1 with the
// reason on stderr (75 when transient) and never log that it is listening.
import { expect, vi } from "vitest";
import { startServer } from "../../templates/runtime/server.js";
import type { AgentDefinition } from "../../templates/runtime/types.js";
import { captureLogger } from "./helpers.js";

/**
 * startServer with process.exit and stderr stubbed: it must exit `exitCode` (1: a configuration error;
 * 75: transient) without ever listening.
 * Returns what it wrote to stderr.
 */
export async function refusedStart(
  agent: AgentDefinition,
  env: Record<string, string>,
  exitCode = 1,
): Promise<string> {
  const exit = vi.spyOn(process, "exit").mockImplementation((code) => {
    throw new Error(`process.exit(${code})`);
  });
  const written: string[] = [];
  const write = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    written.push(String(chunk));
    return true;
  });
  try {
    const logger = captureLogger();
    await expect(startServer(agent, { env, logger })).rejects.toThrow(`process.exit(${exitCode})`);
    expect(exit).toHaveBeenCalledWith(exitCode);
    expect(logger.lines.some((l) => l.message.includes("listening"))).toBe(false);
    return written.join("");
  } finally {
    exit.mockRestore();
    write.mockRestore();
  }
}
