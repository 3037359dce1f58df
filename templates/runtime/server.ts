/**
 * Starts the HTTP server: loads .env, checks the configuration, listens on PORT and shuts down
 * gracefully on SIGINT/SIGTERM. Part of your project: edit freely.
 */
import { existsSync } from "node:fs";
import type { Server } from "node:http";
import { createApp } from "./app.js";
import { ConfigError, resolveConfig, type AppOptions } from "./ops/config.js";
import { createLogger } from "./ops/logger.js";
import type { AgentDefinition, Logger } from "./types.js";

/**
 * Stops accepting connections and resolves once in-flight requests have finished.
 * Idle keep-alive connections are closed right away (and again as requests finish) so they
 * cannot hold the server open.
 */
export function shutdownGracefully(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    const sweeper = setInterval(() => server.closeIdleConnections(), 200);
    server.close((err) => {
      clearInterval(sweeper);
      if (err) reject(err);
      else resolve();
    });
    server.closeIdleConnections();
  });
}

export async function startServer(
  agent: AgentDefinition,
  options: AppOptions = {},
): Promise<Server> {
  // .env in the working directory fills in variables that are not already set (real env wins).
  if (options.env === undefined && existsSync(".env")) process.loadEnvFile(".env");

  let port: number;
  let devMode: boolean;
  let logger: Logger;
  let app: ReturnType<typeof createApp>;
  try {
    const config = resolveConfig(options);
    ({ port, devMode } = config);
    logger = options.logger ?? createLogger({ level: config.logLevel });
    app = createApp(agent, { ...options, logger });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }

  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(port, (err?: Error) => {
      if (!err) return resolve(s);
      process.stderr.write(`Could not listen on port ${port}: ${err.message}\n`); // e.g. EADDRINUSE: set PORT
      process.exit(1);
    });
  });
  const address = server.address();
  const actualPort = typeof address === "object" && address ? address.port : port;
  logger.info(`${agent.name} ${agent.version} listening on http://localhost:${actualPort}`, {
    mode: devMode ? "dev (payments bypassed)" : "production (payments required)",
  });

  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn(`${signal} again: exiting without waiting for in-flight jobs`);
      process.exit(1);
    }
    stopping = true;
    logger.info(
      `${signal} received: finishing in-flight jobs, then exiting (send it again to force)`,
    );
    shutdownGracefully(server).then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error("error while shutting down", { error: String(err) });
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  server.on("close", () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  });
  return server;
}
