// What the MCP tests share: servers started from the runtime's app and official SDK clients connected
// to their /mcp, all closed after each test.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach } from "vitest";
import type { AppOptions } from "../../templates/runtime/config.js";
import { makeAgent, startApp, type Running } from "./helpers.js";

/** Call once at a test file's top level: `serve` starts an app, `connect` an SDK client to its /mcp. */
export function mcpServers(clientName: string) {
  const running: Running[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.close()));
  });

  async function serve(options: AppOptions = { devMode: true }) {
    const agent = makeAgent();
    const app = await startApp(agent, options);
    running.push(app);
    return { ...app, agent };
  }

  async function connect(url: string): Promise<Client> {
    const client = new Client({ name: clientName, version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    running.push({ url, server: undefined as never, close: () => client.close() });
    return client;
  }

  return { running, serve, connect };
}
