// HTTP servers in tests: listening on a free port of 127.0.0.1, closing (keep-alive sockets too, which
// would otherwise hold close() open), a free port and a URL nothing listens on (connection refused), and a started
// server's GET /health. Node only (no vitest), so global setups and fixtures can use it too.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Listens on a free port of 127.0.0.1: the server's base URL (no trailing slash). */
export async function listenLocal(server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes a server if it is listening, its open connections first. */
export async function closeServer(server: Server | undefined): Promise<void> {
  if (!server?.listening) return;
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) =>
    server.close((error) => (error ? reject(error) : resolve())),
  );
}

/**
 * A port of 127.0.0.1 that nothing listens on right now (one just freed): for a process to listen on, or
 * for a URL that refuses connections.
 */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await listenLocal(probe);
  const { port } = probe.address() as AddressInfo;
  await closeServer(probe);
  return port;
}

/** A URL on 127.0.0.1 that nothing listens on (a port just freed). */
export async function closedUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}

/** The base URL of a started server (startServer's answer). */
export const urlOf = (server: Server): string =>
  `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

export interface Health {
  status: number;
  body: Record<string, unknown>;
}

/** GET <url>/health: its status and JSON body. */
export async function healthOf(url: string): Promise<Health> {
  const res = await fetch(`${url}/health`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * Polls GET <url>/health until `done(status)` (bounded: ~20 s); returns the last answer. Probes are
 * reused for a few seconds, so a route's change shows only after a while.
 */
export async function healthUntil(url: string, done: (status: number) => boolean): Promise<Health> {
  let last = await healthOf(url);
  for (let i = 0; i < 100 && !done(last.status); i++) {
    await new Promise((r) => setTimeout(r, 200));
    last = await healthOf(url);
  }
  return last;
}
