// Transports are folders plus one line of features.ts (TRANSPORTS): a project without mcp/ or
// console/ (their folder deleted, their `// feature:` lines dropped, as `npm run remove` does)
// serves everything else (it type-checks: test/generate/feature-subsets.test.ts), its discovery
// documents silent about the absent transport; a third transport, its folder plus one list entry,
// shows in the routes, CORS, 405s and the discovery documents.
import { execFile } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import type { createApp as CreateApp } from "../../templates/runtime/app.js";
import { withDiscovery } from "./discovery-fixture.js";
import { job, listen, makeAgent, post, type Running } from "./helpers.js";
import { type Feature, type RuntimeCopy, runtimeWithout } from "./without-features.js";

const root = new URL("../..", import.meta.url).pathname;
const copies: RuntimeCopy[] = [];
const running: Running[] = [];
afterAll(async () => {
  await Promise.all(running.map((r) => r.close()));
  for (const copy of copies) copy.remove();
});

/**
 * A project's layout around a copy of the runtime (runtimeWithout: `absent` features' folders and lines
 * gone, with the generated project's two tsconfigs), `edit` applied to the copy; returns the copy.
 */
function project(
  absent: readonly Feature[],
  edit: (runtime: string) => void = () => {},
): RuntimeCopy {
  const copy = runtimeWithout(absent);
  copies.push(copy);
  edit(join(copy.dir, "src/runtime"));
  return copy;
}

/** Type-checks a runtime copy as the project does (tsc -b's runtime project), declarations kept apart. */
async function typecheck(copy: RuntimeCopy): Promise<void> {
  const tsc = join(root, "node_modules/typescript/bin/tsc");
  const runtime = join(copy.dir, "src/runtime");
  const out = join(copy.dir, "out");
  await promisify(execFile)(
    process.execPath,
    [
      tsc,
      "-p",
      join(runtime, "tsconfig.json"),
      "--outDir",
      out,
      "--tsBuildInfoFile",
      `${out}.tsbuildinfo`,
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  ).catch((err: { stdout?: string }) => {
    const errors = (err.stdout ?? String(err)).split("\n").filter((line) => /error TS/.test(line));
    throw new Error(`the runtime copy does not type-check:\n${errors.join("\n")}`);
  });
}

/** Serves the copy's app (production-free dev mode, with discovery data). */
async function serve(copy: RuntimeCopy): Promise<string> {
  const { createApp } = (await copy.load("app.ts")) as { createApp: typeof CreateApp };
  const app = await listen(createApp(withDiscovery(makeAgent()), { devMode: true }));
  running.push(app);
  return app.url;
}

const text = async (url: string, init?: RequestInit) => {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, body: await res.text() };
};

describe("a project without a transport's folder", () => {
  // That such a project type-checks: test/generate/feature-subsets.test.ts (one tsc per absent feature).
  it("without mcp/: serves jobs, and no document or route mentions /mcp", async () => {
    const copy = project(["mcp"]);
    const url = await serve(copy);
    const answer = await post(url, job("echo", { text: "hi" }));
    expect(answer.status).toBe(200);
    for (const path of ["/llms.txt", "/.well-known/agent-card.json", "/openapi.json"]) {
      const doc = await text(`${url}${path}`);
      expect(doc.status).toBe(200);
      expect(doc.body).toContain("/execute");
      expect(doc.body).not.toContain("/mcp");
    }
    expect((await text(`${url}/llms.txt`)).body).not.toMatch(/\bMCP\b/);
    const mcp = await text(`${url}/mcp`, { method: "POST" });
    expect(mcp.status).toBe(404);
    const endpoints = (JSON.parse(mcp.body) as { error: string }).error.split("endpoints: ")[1];
    expect(endpoints).toContain("POST /execute");
    expect(endpoints).not.toContain("/mcp");
    expect((await text(`${url}/mcp`, { method: "OPTIONS" })).status).toBe(404);
  }, 180_000);

  it("without console/: serves no page at GET /", async () => {
    const copy = project(["console"]);
    const url = await serve(copy);
    const page = await text(`${url}/`, { headers: { accept: "text/html" } });
    expect(page.status).toBe(404);
    expect((await text(`${url}/health`)).status).toBe(200);
    expect((await text(`${url}/llms.txt`)).body).toContain("## MCP");
  }, 180_000);
});

describe("settings of a transport the project lacks", () => {
  it("refuse the start naming the fix, except its switch set to off", async () => {
    const copy = project(["mcp", "a2a", "console"]);
    const { ConfigError, resolveConfig } = (await copy.load("config.ts")) as {
      ConfigError: new () => Error & { problems: string[] };
      resolveConfig: (o: { env: Record<string, string> }) => unknown;
    };
    const problems = (env: Record<string, string>) => {
      try {
        resolveConfig({ env: { SERVICE_DEV_MODE: "true", ...env } });
        return [];
      } catch (err) {
        if (err instanceof ConfigError) return err.problems;
        throw err;
      }
    };
    const fix = (feature: string) =>
      `, which this project does not include: run npm run add -- ${feature}`;
    expect(problems({ MCP: "on" })).toEqual([`MCP is set (MCP tools at POST /mcp)${fix("mcp")}`]);
    expect(problems({ MCP_DEADLINE_SECONDS: "30" })).toEqual([
      `MCP_DEADLINE_SECONDS is set (MCP tools at POST /mcp)${fix("mcp")}`,
    ]);
    expect(problems({ A2A_DEADLINE_SECONDS: "60" })).toEqual([
      `A2A_DEADLINE_SECONDS is set (A2A at POST /a2a)${fix("a2a")}`,
    ]);
    expect(problems({ CONSOLE: "on" })).toEqual([
      `CONSOLE is set (the console page at GET /)${fix("console")}`,
    ]);
    // Off is what a project without them is anyway (a .env kept from before `remove`).
    expect(problems({ MCP: "off", A2A: "off", CONSOLE: "off" })).toEqual([]);
    // "OFF" is refused as in a project with them, not taken for asking for the feature.
    expect(problems({ MCP: "OFF" })).toEqual([
      'MCP is "OFF": set it to "off" (no POST /mcp) or "on" (the default)',
    ]);
  });
});

describe("a third transport", () => {
  it("is its folder plus one entry of TRANSPORTS: routes, CORS, 405s and discovery show it", async () => {
    const copy = project([], (dir) => {
      mkdirSync(join(dir, "echo"));
      writeFileSync(
        join(dir, "echo/transport.ts"),
        `import type { Transport } from "../transport.js";
export const ECHO_TRANSPORT: Transport = {
  name: "echo",
  routes: [{ path: "/echo", methods: "POST", allowHeaders: "X-Echo" }],
  mount: (app) => void app.post("/echo", (_req, res) => void res.json({ echoed: true })),
  discovery: {
    cardInterface: (base) => ({ url: \`\${base}/echo\`, protocolBinding: "ECHO", protocolVersion: "1" }),
    llms: (base) => ["## Echo", "", \`POST \${base}/echo answers {"echoed":true}.\`],
  },
};
`,
      );
      const file = join(dir, "features.ts");
      const source = readFileSync(file, "utf8")
        .replace(
          /^(import .* \/\/ feature: mcp)$/m,
          '$1\nimport { ECHO_TRANSPORT } from "./echo/transport.js";',
        )
        .replace(/^( {2}MCP_TRANSPORT, \/\/ feature: mcp)$/m, "$1\n  ECHO_TRANSPORT,");
      expect(source).toContain("  ECHO_TRANSPORT,\n");
      writeFileSync(file, source);
    });
    await typecheck(copy);
    const url = await serve(copy);

    expect(await (await fetch(`${url}/echo`, { method: "POST" })).json()).toEqual({ echoed: true });
    const preflight = await text(`${url}/echo`, { method: "OPTIONS" });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
    expect(preflight.headers.get("access-control-allow-headers")).toMatch(/, X-Echo$/);
    const get = await text(`${url}/echo`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    expect((await text(`${url}/nope`)).body).toContain("POST /mcp, POST /echo");

    const card = JSON.parse(
      (await text(`${url}/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } }))
        .body,
    );
    // A2A 1.0 reads the first interface as the preferred one: A2A's own bindings lead.
    expect(card.supportedInterfaces.map((i: { url: string }) => i.url)).toEqual([
      `${url}/a2a`,
      `${url}/a2a/rest`,
      `${url}/execute`,
      `${url}/mcp`,
      `${url}/echo`,
    ]);
    const llms = (await text(`${url}/llms.txt`)).body;
    expect(llms).toContain(`## Echo\n\nPOST ${url}/echo answers {"echoed":true}.`);
    expect(llms.indexOf("## MCP")).toBeLessThan(llms.indexOf("## Echo"));
  }, 180_000);
});

describe("the job pipeline knows no transport", () => {
  it("jobs/ names no HTTP header, status code, Express type or header reader (the adapters map its outcome)", () => {
    const dir = join(root, "templates/runtime/jobs");
    const http =
      /PAYMENT-|X-PAYMENT|Retry-After|Cache-Control|Content-Type|\bstatus: \d{3}\b|\b(?:200|402|409|499|503)\b|express|HeaderGetter|headers/;
    const found = readdirSync(dir)
      .filter((name) => name.endsWith(".ts"))
      .flatMap((name) =>
        readFileSync(join(dir, name), "utf8")
          .replace(/\/\*[\s\S]*?\*\//g, "")
          .split("\n")
          .map((line, i) => [`jobs/${name}:${i + 1}`, line.replace(/\/\/.*$/, "")] as const)
          .filter(([, code]) => http.test(code))
          .map(([where, code]) => `${where}: ${code.trim()}`),
      );
    expect(found).toEqual([]);
  });
});
