// The generated README's MCP client story, read as a user copies it: each assistant's configuration is valid
// JSON naming this server's /mcp, the Claude Code command is one line, the README says plainly that an
// assistant cannot pay, the project's own `call --mcp` comes first, and the two paying recipes parse (node --check, python3's compiler) with the first
// capability's sample call rendered in each language. test/e2e/mcp-pay.test.ts runs the TypeScript one
// against a paid project on anvil.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { generateProjectFiles } from "../../src/generate/project.js";
import { parseManifest } from "../../src/manifest/index.js";
import { codeBlocks, section } from "../e2e/readme-blocks.js";

const run = promisify(execFile);
const MANIFEST = JSON.stringify({
  name: "@acme/shop-agent",
  version: "1.0.0",
  capabilities: {
    "classify-review": {
      description: "Classify a review",
      pricing: { model: "per_job", amount: "0.02", currency: "USDC" },
      input_schema: {
        review: { type: "string", required: true, examples: ['it\'s "good"'] },
        strict: { type: "boolean", required: true, examples: [true] },
        note: { type: "string", required: false },
      },
      output_schema: { sentiment: { type: "string" } },
    },
  },
});
const readme = generateProjectFiles(parseManifest(MANIFEST, "agent.json")).find(
  (f) => f.path === "README.md",
)!.contents;
const dir = await mkdtemp(join(tmpdir(), "create-agent-readme-mcp-"));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("the README's MCP client story", () => {
  const connect = section(readme, "### Connecting an assistant");

  it("gives Claude Code, Claude Desktop (mcp-remote), Cursor and VS Code configurations naming /mcp", () => {
    expect(connect).toContain(
      "`claude mcp add --transport http shop-agent http://localhost:3000/mcp`",
    );
    const configs = codeBlocks(connect)
      .filter((b) => b.lang === "json")
      .map((b) => JSON.parse(b.text) as Record<string, Record<string, Record<string, unknown>>>);
    expect(configs).toEqual([
      {
        mcpServers: {
          "shop-agent": { command: "npx", args: ["-y", "mcp-remote", "http://localhost:3000/mcp"] },
        },
      },
      { mcpServers: { "shop-agent": { url: "http://localhost:3000/mcp" } } },
      { servers: { "shop-agent": { type: "http", url: "http://localhost:3000/mcp" } } },
    ]);
  });

  it("says an ordinary assistant cannot pay a paid tool, and what can", () => {
    expect(connect).toContain("**An assistant cannot pay.**");
    expect(connect).toMatch(/dev mode[^.]*every tool is free/);
  });

  it("first names the project's own `call --mcp` command for the first capability, paying from X402_PAYER_KEY", () => {
    const code = section(readme, "### Paying a tool from code");
    const lines = codeBlocks(code)
      .filter((b) => b.lang === "sh")
      .flatMap((b) => b.text.split("\n"))
      .filter((line) => line.includes("--mcp"));
    expect(lines).toEqual([
      expect.stringMatching(
        /^X402_PAYER_KEY=0x\.\.\. npm run call -- classify-review --input .* --mcp\b/,
      ),
    ]);
    expect(code).toMatch(/never more\s+than the price `\/about` declares or `--max-price`/);
  });

  it("the TypeScript recipe parses and calls the first capability with its sample input", async () => {
    const code = section(readme, "### Paying a tool from code");
    const js = codeBlocks(code).filter((b) => b.lang === "js");
    expect(js).toHaveLength(1);
    expect(js[0]!.text).toContain(
      `const call = { name: "classify-review", arguments: {"review":"it's \\"good\\"","strict":true} };`,
    );
    expect(js[0]!.text).toContain('maxAmountPerPayment: "$0.02"');
    const file = join(dir, "mcp-pay.mjs");
    await writeFile(file, js[0]!.text);
    await run(process.execPath, ["--check", file]);
  });

  it("the Python recipe uses x402MCPSession over Streamable HTTP (not the SSE helper) and compiles", async () => {
    const code = section(readme, "### Paying a tool from code");
    const py = codeBlocks(code).filter((b) => b.lang === "python");
    expect(py).toHaveLength(1);
    const text = py[0]!.text;
    expect(text).toContain("x402MCPSession(session, payer)");
    // The SDK's names (x402 2.8: python/x402/mcp/client.py, mechanisms/evm/exact/register.py, client_base.py).
    expect(text).toContain("from x402 import max_amount, x402Client");
    expect(text).toContain("policies=[max_amount(20000)],"); // the first capability's 0.02 USDC
    expect(text).toContain('networks="eip155:84532",');
    expect(text).toContain("result.payment_response");
    expect(text).toContain("async with streamable_http_client(url) as (read, write, *_):");
    expect(text).not.toMatch(/create_x402_mcp_client\(/);
    expect(text).toContain(
      `await mcp.call_tool("classify-review", {"review": "it's \\"good\\"", "strict": True})`,
    );
    // mcp 2 renamed the result fields x402MCPSession reads (isError -> is_error); 1.24 added the transport.
    expect(code).toContain('pip install "x402[mcp,evm]" "mcp>=1.24,<2"');
    const file = join(dir, "mcp_pay.py");
    await writeFile(file, text);
    await run("python3", ["-c", `import ast,sys; ast.parse(open(sys.argv[1]).read())`, file]);
  });
});
