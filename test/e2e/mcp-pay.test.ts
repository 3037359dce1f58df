// The generated README's "Paying a tool from code" recipes, run verbatim: its `npm run call -- ... --mcp` line (the
// vendored CLI, paying over MCP), and mcp-pay.mjs, saved in the project
// folder (the client it imports installed as the README says), pays one MCP tool call of a paid project with the official x402 client (@x402/fetch's x402Client,
// @x402/evm's exact scheme) through the official MCP SDK client, on the local anvil chain (chain id 84532,
// Base Sepolia's USDC address holding Circle's FiatTokenV2_2, the local facilitator). Balances are read back:
// the payee gets the price once. The same script against the dev-mode server prints the output, paying nothing.
import { readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { createPublicClient, http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { localChain } from "../chain/anvil.js";
import { BASE_SEPOLIA_USDC, ensureBaseSepoliaUsdc, mintUsdc, usdcBalance } from "../chain/usdc.js";
import { buildProject, copyProject, linkX402Client, startServer } from "./helpers.js";
import { codeBlocks, section } from "./readme-blocks.js";

const shared = inject("projectDir");
const chain = inject("chain");
const SECTION = "### Paying a tool from code";
const env = (extra: Record<string, string>) => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? tmpdir(),
  ...extra,
});

let projectDir = "";
/** The README's `X402_PAYER_KEY=0x... npm run call -- ... --mcp` line. */
let callMcpLine = "";
beforeAll(async () => {
  projectDir = await copyProject(shared, "create-agent-mcp-pay-");
  await buildProject(projectDir);
  const text = section(readFileSync(join(projectDir, "README.md"), "utf8"), SECTION);
  // The client the section says to install first (no project carries it), linked from the first-use cache.
  expect(text).toContain(
    "`npm install --save-dev @x402/fetch@2.27.0 @x402/evm@2.27.0 viem@2.57.1`",
  );
  await linkX402Client(projectDir, shared);
  const scripts = codeBlocks(text).filter((b) => b.lang === "js" && b.text.includes("mcp-pay.mjs"));
  if (scripts.length !== 1)
    throw new Error(
      `"${SECTION}" should show one \`\`\`js block for mcp-pay.mjs, found ${scripts.length}`,
    );
  await writeFile(join(projectDir, "mcp-pay.mjs"), scripts[0]!.text);
  const run = codeBlocks(text)
    .filter((b) => b.lang === "sh")
    .flatMap((b) => b.text.split("\n"))
    .filter((line) => /\bnode mcp-pay\.mjs\b/.test(line));
  expect(run).toEqual([expect.stringMatching(/^X402_PAYER_KEY=0x\.\.\. node mcp-pay\.mjs\b/)]);
  const calls = codeBlocks(text)
    .filter((b) => b.lang === "sh")
    .flatMap((b) => b.text.split("\n"))
    .filter((line) => line.includes(" --mcp"));
  expect(calls).toHaveLength(1);
  callMcpLine = calls[0]!;
});
afterAll(async () => {
  if (projectDir) await rm(dirname(projectDir), { recursive: true, force: true });
});

/** `node mcp-pay.mjs` in the project folder, as the README runs it. */
const mcpPay = (extra: Record<string, string>) =>
  execa("node", ["mcp-pay.mjs"], {
    cwd: projectDir,
    env: env(extra),
    extendEnv: false,
    reject: false,
    all: true,
    timeout: 90_000,
  });

/** The project served in production on anvil (a fresh PAY_TO), and a payer key holding 1 USDC. */
async function paidServer() {
  await ensureBaseSepoliaUsdc(chain.rpcUrl);
  const key = generatePrivateKey();
  await mintUsdc(chain.rpcUrl, BASE_SEPOLIA_USDC, privateKeyToAccount(key).address, 1_000_000n);
  const payTo = privateKeyToAddress(generatePrivateKey());
  const server = await startServer(
    projectDir,
    env({
      PAY_TO: payTo,
      X402_NETWORK: "base-sepolia",
      X402_FACILITATOR_URL: chain.facilitatorUrl,
    }),
  );
  return { key, payTo, server };
}

describe("the README's MCP payment recipe, on anvil", () => {
  it("pays one tool call with the official x402 client: the output, a mined transfer, the price to PAY_TO once", async () => {
    const publicClient = createPublicClient({
      chain: localChain(chain.rpcUrl, chain.chainId),
      transport: http(chain.rpcUrl),
    });
    const { key, payTo, server } = await paidServer();
    try {
      const before = await usdcBalance(chain.rpcUrl, BASE_SEPOLIA_USDC, payTo);
      const paid = await mcpPay({ X402_PAYER_KEY: key, AGENT_URL: server.url });
      const context = `mcp-pay.mjs printed:\n${paid.all}\n\nserver log:\n${server.output()}`;
      expect(paid.exitCode, context).toBe(0);
      const [outputLine, paidLine] = paid.stdout.split("\n");
      expect(JSON.parse(outputLine!), context).toEqual({ summary: expect.any(String) });
      const hash = /^paid: (0x[0-9a-f]{64})$/.exec(paidLine ?? "")?.[1] as Hex | undefined;
      expect(hash, context).toBeDefined();
      const mined = await publicClient.getTransactionReceipt({ hash: hash! });
      expect(mined.status).toBe("success");
      // summarize costs 0.01 USDC in the e2e manifest.
      expect(await usdcBalance(chain.rpcUrl, BASE_SEPOLIA_USDC, payTo)).toBe(before + 10_000n);
      const settled = server
        .output()
        .split("\n")
        .filter((l) => l.includes("payment settled"));
      expect(settled, server.output()).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });

  it("the README's `call --mcp` line (the vendored CLI) pays one tool call: the output, the price to PAY_TO once", async () => {
    const { key, payTo, server } = await paidServer();
    try {
      const command = callMcpLine.replace(/^X402_PAYER_KEY=0x\.\.\. /, "").replace(/\s+#.*$/, "");
      const paid = await execa("sh", ["-c", command], {
        cwd: projectDir,
        env: env({ X402_PAYER_KEY: key, AGENT_URL: server.url }),
        extendEnv: false,
        reject: false,
        timeout: 90_000,
      });
      const context = `${command} printed:\n${paid.stdout}\n${paid.stderr}\n\nserver log:\n${server.output()}`;
      expect(paid.exitCode, context).toBe(0);
      expect(JSON.parse(paid.stdout.slice(paid.stdout.indexOf("{"))), context).toEqual({
        summary: expect.any(String),
      });
      expect(paid.stderr, context).toContain("paid 0.01 USDC on eip155:84532");
      expect(await usdcBalance(chain.rpcUrl, BASE_SEPOLIA_USDC, payTo)).toBe(10_000n);
      expect(
        server
          .output()
          .split("\n")
          .filter((l) => l.includes("payment settled")),
      ).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });

  it("in dev mode prints the output and pays nothing", async () => {
    const server = await startServer(projectDir, env({ SERVICE_DEV_MODE: "true" }));
    try {
      const free = await mcpPay({ X402_PAYER_KEY: generatePrivateKey(), AGENT_URL: server.url });
      expect(free.exitCode, free.all).toBe(0);
      const [outputLine, paidLine] = free.stdout.split("\n");
      expect(JSON.parse(outputLine!)).toEqual({ summary: expect.any(String) });
      expect(paidLine).toBe("paid: nothing (dev mode)");
    } finally {
      await server.stop();
    }
  });
});
