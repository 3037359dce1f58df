// Dev-mode MCP tools/call throughput: a generated project (one capability, `echo`) run as
// `SERVICE_DEV_MODE=true node dist/server.js`, answering POST /mcp, against a bare MCP SDK server with the
// same echo tool over the same transport (Express 5 + express.json(), the SDK's low-level Server and its
// stateless StreamableHTTPServerTransport with JSON answers, a Server and a transport per request, as the
// SDK's stateless example does; no validation, no deadline, no logging). Both single processes, measured
// in interleaved windows by a keep-alive load generator in this process (MCP_BENCH_CONCURRENCY
// connections, closed loop). Ratios: requests/s (higher is better) and p99 latency (lower is better),
// create-agent over the peer. Target: requests/s >= 0.9x.
// Run: npx tsc -p tsconfig.build.json && node bench/mcp.mjs
// Knobs: RUNS (9 pairs), MCP_BENCH_SECONDS (3 per window), MCP_BENCH_CONCURRENCY (16).
import { writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { median, pairs, report } from "./lib.mjs";
import { buildProject, ECHO_HANDLER, ECHO_MANIFEST, load, startServer, stop, workDir } from "./lib-server.mjs";

const runs = Number(process.env.RUNS ?? 9);
const seconds = Number(process.env.MCP_BENCH_SECONDS ?? 3);
const concurrency = Number(process.env.MCP_BENCH_CONCURRENCY ?? 16);
const work = workDir("bench-mcp");

/** The same echo tool on the SDK alone. */
const SDK_PEER = `import express from "express";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const tools = [{
  name: "echo",
  description: "Echoes its text",
  inputSchema: { type: "object", properties: { text: { type: "string", minLength: 1, maxLength: 100 } }, required: ["text"], additionalProperties: false },
}];
const app = express();
app.use(express.json());
app.post("/mcp", async (req, res) => {
  const server = new Server({ name: "bench-agent", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const output = { text: request.params.arguments.text };
    return { content: [{ type: "text", text: JSON.stringify(output) }], structuredContent: output };
  });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
const listening = app.listen(Number(process.env.PORT ?? 0), () => {
  console.log(\`listening on http://localhost:\${listening.address().port}\`);
});
`;

const project = buildProject(join(work, "agent"), ECHO_MANIFEST, { "echo.ts": ECHO_HANDLER });
const peerFile = join(project, "peer-mcp.mjs");
writeFileSync(peerFile, SDK_PEER);

const ours = await startServer(["dist/server.js"], { cwd: project, env: { SERVICE_DEV_MODE: "true" } });
const peer = await startServer([peerFile], { cwd: project });
const loadStart = loadavg()[0];

const bodies = Array.from({ length: 1024 }, (_, i) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: i,
    method: "tools/call",
    params: { name: "echo", arguments: { text: `hello ${i}` } },
  }),
);
const next = (i) => {
  const body = bodies[i % bodies.length];
  return {
    method: "POST",
    path: "/mcp",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      "content-length": Buffer.byteLength(body),
    },
    body,
  };
};
const check = (res, i) => {
  if (res.status !== 200) return `HTTP ${res.status}: ${res.body.slice(0, 300)}`;
  if (i < 50) {
    const answer = JSON.parse(res.body);
    if (answer.result?.isError || answer.result?.structuredContent?.text !== `hello ${i % bodies.length}`)
      return `unexpected answer: ${res.body.slice(0, 300)}`;
  }
  return undefined;
};

const windows = { ours: [], peer: [] };
const measure = (side, { port, child }) => async () => {
  const result = await load({ port, pid: child.pid, concurrency, seconds, next, check });
  if (result.errors.length > 0) throw new Error(`${side}: ${result.errors.join("\n")}`);
  windows[side].push(result);
  return result;
};
try {
  await pairs({ ours: measure("ours", ours), peer: measure("peer", peer), runs });
  // pairs() also ran a warm-up round: the last `runs` windows of each side are the measured ones.
  const pick = (key) => ({
    ours: windows.ours.slice(-runs).map((w) => w[key]),
    peer: windows.peer.slice(-runs).map((w) => w[key]),
  });
  const withRatios = (series) => ({ ...series, ratios: series.ours.map((x, i) => x / series.peer[i]) });
  const rps = withRatios(pick("rps"));
  const p99 = withRatios(pick("p99"));
  const p50 = pick("p50");
  console.log(
    `mcp bench: ${availableParallelism()} cores, load average ${loadStart.toFixed(2)} at start, ${loadavg()[0].toFixed(2)} at end; ` +
      `${runs} pairs of ${seconds} s windows, ${concurrency} connections`,
  );
  console.log(
    `p50 latency: create-agent median ${median(p50.ours).toFixed(2)} ms, sdk median ${median(p50.peer).toFixed(2)} ms`,
  );
  report("mcp-dev-p99-latency-lower-is-better", p99, { peer: "sdk-server" });
  report("mcp-dev-tools-call-per-second-higher-is-better", rps, { unit: "req/s", peer: "sdk-server" });
} finally {
  await Promise.all([stop(ours.child), stop(peer.child)]);
}
