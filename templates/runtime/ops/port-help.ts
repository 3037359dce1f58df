/**
 * What to say when another process holds the port the server (or its metrics listener) wants: how to
 * find that process, and a port to use instead that was checked free a moment ago (never one that is
 * busy too). `create-agent dev` says the same words when it finds PORT busy (a test holds the two
 * together). Part of your project: edit freely.
 */
import { createServer } from "node:net";

/** How many ports after a busy one are tried for a free one. */
const PORTS_TRIED = 50;

/** Whether nothing listens on `port` (bound as the server binds: every interface, or `host`). */
function isFree(port: number, host?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/** The first port after `port` (then before it, at the top of the range) that is free now. */
export async function freePortNear(port: number, host?: string): Promise<number | undefined> {
  for (let i = 1; i <= PORTS_TRIED; i++) {
    const candidate = port + i <= 65535 ? port + i : port - i;
    if (candidate > 0 && (await isFree(candidate, host))) return candidate;
  }
  return undefined;
}

/**
 * How to find the process on `port`, and what to set instead: `free`, a port found free (freePortNear),
 * or none when no free one was found nearby.
 */
export function portInUse(
  variable: "PORT" | "METRICS_PORT",
  port: number,
  free: number | undefined,
): string {
  const find =
    process.platform === "win32" ? `netstat -ano | findstr :${port}` : `lsof -i :${port}`;
  const instead =
    free === undefined
      ? `set ${variable} to a free port in .env or before the command`
      : `set ${variable} to a free port, e.g. \`${variable}=${free}\` (free right now) in .env or before the command`;
  return `another process is listening on port ${port} (see which with \`${find}\`): stop it, or ${instead}`;
}
