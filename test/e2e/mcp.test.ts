// A generated project over MCP, in dev mode: the official MCP SDK client lists and calls every capability
// of the e2e manifest (the same output as POST /execute for the same input), gets the typed errors as
// isError results, and the MCP Inspector's CLI lists the tools. Paid MCP calls: test/chain/mcp.test.ts.
import { rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildProject, copyProject, post, startServer } from "./helpers.js";

const shared = inject("projectDir");
const INSPECTOR = join(
  import.meta.dirname,
  "../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
);

// Deterministic handlers, with a way to throw, to return a wrong output and to be slow.
const SUMMARIZE = `import type { SummarizeInput, SummarizeOutput } from "../generated/types.js";
export default async function summarize(input: SummarizeInput): Promise<SummarizeOutput> {
  if (input.text === "throw") throw new Error("boom");
  if (input.text === "slow") await new Promise((resolve) => setTimeout(resolve, 5_000));
  return { summary: input.text.split(" ").slice(0, input.max_words).join(" ") };
}
`;
const CLASSIFY = `import type { ClassifyReviewInput, ClassifyReviewOutput } from "../generated/types.js";
export default async function classifyReview(input: ClassifyReviewInput): Promise<ClassifyReviewOutput> {
  return { sentiment: input.review.includes("good") ? "positive" : "negative", confidence: 0.5, topics: [{ name: input.product.sku, weight: 1 }] };
}
`;

let projectDir = "";
let server: Awaited<ReturnType<typeof startServer>>;
let client: Client;

beforeAll(async () => {
  projectDir = await copyProject(shared, "create-agent-mcp-");
  await writeFile(join(projectDir, "src/capabilities/summarize.ts"), SUMMARIZE);
  await writeFile(join(projectDir, "src/capabilities/classify-review.ts"), CLASSIFY);
  await buildProject(projectDir);
  server = await startServer(projectDir, {
    PATH: process.env.PATH ?? "",
    SERVICE_DEV_MODE: "true",
    MCP_DEADLINE_SECONDS: "30",
  });
  client = new Client({ name: "e2e", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
});
afterAll(async () => {
  await client?.close();
  await server?.stop();
  if (projectDir) await rm(dirname(projectDir), { recursive: true, force: true });
});

const inputs: Record<string, Record<string, unknown>> = {
  summarize: { text: "one two three four", max_words: "2" },
  "classify-review": { review: "good stuff", product: { sku: "ABC-1234" }, languages: ["en"] },
};

describe("a generated project over MCP (dev mode)", () => {
  it("lists every capability as a tool and answers each call as POST /execute does", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["summarize", "classify-review"]);
    expect(client.getServerVersion()).toMatchObject({ name: "shop-agent", version: "1.2.0" });
    for (const [name, input] of Object.entries(inputs)) {
      const result = await client.callTool({ name, arguments: structuredClone(input) });
      const res = await fetch(
        `${server.url}/execute`,
        post(
          JSON.stringify({
            service_version: "1.0",
            job_id: `http-${name}`,
            task: { capability: name, input },
            deadline: Date.now() / 1000 + 60,
          }),
        ),
      );
      expect(res.status).toBe(200);
      const { output } = (await res.json()) as { output: unknown };
      expect(result.isError, name).toBeFalsy();
      expect(result.structuredContent, name).toEqual(output);
    }
  });

  it("answers validation, deadline and handler failures as isError with their error_type", async () => {
    const failure = async (args: Record<string, unknown>, meta?: Record<string, unknown>) => {
      const result = await client.callTool({
        name: "summarize",
        arguments: args,
        ...(meta && { _meta: meta }),
      });
      expect(result.isError).toBe(true);
      return (result.structuredContent as { error_type: string }).error_type;
    };
    expect(await failure({ max_words: 3 })).toBe("validation");
    expect(await failure({ text: "slow" }, { deadline: Date.now() / 1000 + 1 })).toBe("deadline");
    expect(await failure({ text: "throw" })).toBe("internal");
    expect(server.output()).toContain('"transport":"mcp"');
  });

  it("is listed by the MCP Inspector's CLI", async () => {
    const { stdout, exitCode } = await execa(
      process.execPath,
      [INSPECTOR, "--cli", `${server.url}/mcp`, "--method", "tools/list"],
      { reject: false, env: { MCP_CATALOG_PATH: join(dirname(projectDir), "mcp.json") } },
    );
    expect(exitCode).toBe(0);
    const listed = JSON.parse(stdout) as { tools: Array<{ name: string; inputSchema: object }> };
    expect(listed.tools.map((t) => t.name)).toEqual(["summarize", "classify-review"]);
  });
});
