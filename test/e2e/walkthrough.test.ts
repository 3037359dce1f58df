// The generated README's "A first paid job on Base Sepolia", followed step by step on the local anvil chain
// (chain id 84532, Base Sepolia's): its build and start command, its payer-key command, its pay.mjs verbatim,
// run in the project folder with the official x402 client its step 2 installs. Only what cannot be done here changes: the
// client comes from the shared first-use cache instead of the registry (linkX402Client), the facilitator is the local one
// (no network) instead of x402.org, the faucet is a mint, and Base Sepolia's real USDC address holds Circle's
// FiatTokenV2_2 on anvil, so the client, which pays known USDC contracts only, pays it unmodified.
// The commands come from the README itself: if that section changes shape, this test fails and says so.
import { readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { createPublicClient, http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { localChain } from "../chain/anvil.js";
import { BASE_SEPOLIA_USDC, mintUsdc, usdcBalance, ensureBaseSepoliaUsdc } from "../chain/usdc.js";
import { copyProject, linkX402Client, startServer } from "./helpers.js";
import { type CodeBlock, codeBlocks, section } from "./readme-blocks.js";

const shared = inject("projectDir");
const chain = inject("chain");
const SECTION = "### A first paid job on Base Sepolia";

const publicClient = createPublicClient({
  chain: localChain(chain.rpcUrl, chain.chainId),
  transport: http(chain.rpcUrl),
});

/** The one shell line in `blocks` that `test` picks, or a clear failure naming what is missing. */
function shellLine(blocks: CodeBlock[], what: string, test: (line: string) => boolean): string {
  const lines = blocks
    .filter((b) => b.lang === "sh")
    .flatMap((b) => b.text.split("\n"))
    .filter(test);
  if (lines.length !== 1)
    throw new Error(
      `"${SECTION}" should show exactly one ${what}, found ${lines.length}: the walkthrough changed shape`,
    );
  return lines[0]!;
}

/** `A=1 B=2 cmd args` → the assignments and the command. */
function splitEnv(line: string): { env: Record<string, string>; command: string } {
  const env: Record<string, string> = {};
  const words = line.trim().split(/\s+/);
  while (words[0] && /^[A-Z][A-Z0-9_]*=/.test(words[0])) {
    const word = words.shift()!;
    const eq = word.indexOf("=");
    env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return { env, command: words.join(" ") };
}

/** A minimal environment, as a user's shell has: no npm_* or vitest variables leaking in. */
function shellEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? tmpdir(),
    ...extra,
  };
}

const readme = readFileSync(join(shared, "README.md"), "utf8");

describe("the generated README's first paid job on Base Sepolia, on anvil", () => {
  let projectDir = "";

  beforeAll(async () => {
    projectDir = await copyProject(shared, "create-agent-walkthrough-project-");
  });
  afterAll(async () => {
    if (projectDir) await rm(dirname(projectDir), { recursive: true, force: true });
  });

  it("builds and starts as shown, makes a key, and pays one job with pay.mjs: 200, a mined transfer, the price to PAY_TO", async () => {
    const text = section(readme, SECTION);
    const blocks = codeBlocks(text);

    // Step 1: build, then start with the README's environment.
    const startLine = shellLine(blocks, "start command (`... npm start`)", (l) =>
      /\bnpm start\s*$/.test(l),
    );
    const start = splitEnv(startLine);
    expect(start.command, startLine).toBe("npm start");
    expect(Object.keys(start.env).sort(), startLine).toEqual([
      "PAY_TO",
      "X402_FACILITATOR_URL",
      "X402_NETWORK",
    ]);
    expect(start.env.X402_NETWORK).toBe("base-sepolia");
    expect(start.env.X402_FACILITATOR_URL).toBe("https://x402.org/facilitator");
    // `npm start` runs `exec node dist/server.js`: started below the same way as the other e2e tests.
    const pkg = JSON.parse(readFileSync(join(projectDir, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.start).toBe("exec node dist/server.js");
    const buildLine = shellLine(blocks, "build command", (l) => l.trim() === "npm run build");
    const build = await execa("bash", ["-c", buildLine], {
      cwd: projectDir,
      env: shellEnv(),
      extendEnv: false,
      reject: false,
      all: true,
    });
    expect(build.exitCode, build.all).toBe(0);

    // Step 2: the x402 client (no project carries it), then the payer key, made by the README's own command.
    const installLine = shellLine(
      blocks,
      "x402 client install (`npm install --save-dev @x402/...`)",
      (l) => l.startsWith("npm install --save-dev @x402/"),
    );
    expect(installLine).toBe(
      "npm install --save-dev @x402/fetch@2.27.0 @x402/evm@2.27.0 viem@2.57.1",
    );
    await linkX402Client(projectDir, shared);
    const keyLine = shellLine(blocks, "payer key command (`node ... -e`)", (l) =>
      l.startsWith("node --input-type=module -e "),
    );
    const keyRun = await execa("bash", ["-c", keyLine], {
      cwd: projectDir,
      env: shellEnv(),
      extendEnv: false,
      reject: false,
      all: true,
    });
    expect(keyRun.exitCode, keyRun.all).toBe(0);
    const keyMatch = /^X402_PAYER_KEY=(0x[0-9a-f]{64})\s+# address (0x[0-9a-fA-F]{40})$/m.exec(
      keyRun.stdout,
    );
    expect(keyMatch, `the payer key command printed:\n${keyRun.all}`).not.toBeNull();
    const key = keyMatch![1] as Hex;
    const payer = privateKeyToAccount(key).address;
    expect(keyMatch![2]).toBe(payer);

    // Step 3, the faucet: USDC only, at Base Sepolia's USDC address. No ETH: the facilitator pays the gas.
    await ensureBaseSepoliaUsdc(chain.rpcUrl);
    await mintUsdc(chain.rpcUrl, BASE_SEPOLIA_USDC, payer, 1_000_000n);
    expect(await publicClient.getBalance({ address: payer })).toBe(0n);

    // Step 4: pay.mjs, with the client step 2 installed.
    const scripts = blocks.filter((b) => b.lang === "js" && b.text.includes("pay.mjs"));
    if (scripts.length !== 1)
      throw new Error(
        `"${SECTION}" should show one \`\`\`js block for pay.mjs, found ${scripts.length}: the walkthrough changed shape`,
      );
    const payScript = scripts[0]!.text;
    await writeFile(join(projectDir, "pay.mjs"), payScript);
    const runLine = shellLine(blocks, "pay.mjs command", (l) => /\bnode pay\.mjs\s*$/.test(l));
    expect(runLine).toContain("X402_PAYER_KEY=0x...");

    // The price of the job pay.mjs asks for, from agent.json.
    const capability = /"capability":\s*"([^"]+)"/.exec(payScript)?.[1];
    expect(capability, "pay.mjs names no capability").toBeTruthy();
    const manifest = JSON.parse(readFileSync(join(projectDir, "agent.json"), "utf8")) as {
      capabilities: Record<string, { pricing: { amount: string } }>;
    };
    const [whole, fraction = ""] = manifest.capabilities[capability!]!.pricing.amount.split(".");
    const price = BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, "0") || "0");

    const payTo = privateKeyToAddress(generatePrivateKey());
    const server = await startServer(projectDir, {
      ...shellEnv(),
      ...start.env,
      PAY_TO: payTo,
      X402_FACILITATOR_URL: chain.facilitatorUrl, // x402.org is not reachable here
    });
    try {
      const [payeeBefore, payerBefore] = [
        await usdcBalance(chain.rpcUrl, BASE_SEPOLIA_USDC, payTo),
        await usdcBalance(chain.rpcUrl, BASE_SEPOLIA_USDC, payer),
      ];
      const pay = await execa("bash", ["-c", runLine.replace("0x...", key)], {
        cwd: projectDir,
        env: shellEnv({ AGENT_URL: server.url }),
        extendEnv: false,
        reject: false,
        all: true,
        timeout: 60_000,
      });
      const context = `pay.mjs printed:\n${pay.all}\n\nserver log:\n${server.output()}`;
      expect(pay.exitCode, context).toBe(0);

      // Step 5: 200 with the output, and the transfer's link.
      expect(pay.stdout.startsWith("200 "), context).toBe(true);
      const answer = JSON.parse(pay.stdout.split("\n")[0]!.slice(4)) as {
        status: string;
        output: unknown;
      };
      expect(answer.status, context).toBe("completed");
      expect(answer.output, context).toBeTypeOf("object");
      const link = /^paid: https:\/\/sepolia\.basescan\.org\/tx\/(0x[0-9a-f]{64})$/m.exec(
        pay.stdout,
      );
      expect(link, context).not.toBeNull();
      const hash = link![1] as Hex;
      const mined = await publicClient.getTransactionReceipt({ hash });
      expect(mined.status).toBe("success");
      expect(mined.to?.toLowerCase()).toBe(BASE_SEPOLIA_USDC.toLowerCase());

      expect(await usdcBalance(chain.rpcUrl, BASE_SEPOLIA_USDC, payTo)).toBe(payeeBefore + price);
      expect(await usdcBalance(chain.rpcUrl, BASE_SEPOLIA_USDC, payer)).toBe(payerBefore - price);
      expect(await publicClient.getBalance({ address: payer })).toBe(0n);

      const settled = server
        .output()
        .split("\n")
        .filter((line) => line.includes("payment settled"));
      expect(settled, server.output()).toHaveLength(1);
      expect(settled[0], server.output()).toContain(hash);
    } finally {
      await server.stop();
    }
  });
});
