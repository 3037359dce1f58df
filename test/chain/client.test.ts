// A client written by `create-agent client`, compiled in a fresh strict project and run with node, paying a
// production server on a real chain: anvil with Circle's USDC at Base Sepolia's USDC address (the official
// x402 client knows that contract), the reference facilitator, X402_PAYER_KEY in the script's environment.
import { extractPaymentIdentifier } from "@x402/extensions/payment-identifier";
import { createPublicClient, http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import type { AppOptions } from "../../templates/runtime/config.js";
import {
  buildCli,
  dropProxy,
  type DropMode,
  type DropProxy,
  payingProject,
  type PollOutage,
  priceRefusal,
  type ProxiedRequest,
  type TsProject,
} from "../cli/client-project.js";
import { captureLogger, echoAgent, listen, type Running } from "../runtime/helpers.js";
import { PAYEE } from "./accounts.js";
import { paidThroughLostQueue } from "./lost-queue.js";
import { localChain } from "./anvil.js";
import { BASE_SEPOLIA_USDC, mintUsdc, usdcBalance, ensureBaseSepoliaUsdc } from "./usdc.js";

const { rpcUrl, chainId, asset: localUsdc, facilitatorUrl } = inject("chain");
const chain = createPublicClient({
  chain: localChain(rpcUrl, chainId),
  transport: http(rpcUrl),
  pollingInterval: 20,
});
const PRICE = 10_000n; // 0.01 USDC

/** A new payer key holding 1 USDC of `token` (the facilitator pays the gas). */
async function fundedPayer(token: Hex = BASE_SEPOLIA_USDC): Promise<{ key: Hex; address: Hex }> {
  const key = generatePrivateKey();
  const address = privateKeyToAddress(key);
  await mintUsdc(rpcUrl, token, address, 1_000_000n);
  return { key, address };
}

type Server = Running & { runs: Record<string, number>; settled(): number };

/** A production server selling "echo" for 0.01 USDC in `token`, settling through the facilitator. */
async function startServer(token: Hex): Promise<Server> {
  const runs: Record<string, number> = {};
  const agent = echoAgent("chain-echo", "echo, paid on chain", PRICE, runs);
  const payment: AppOptions["payment"] = {
    payTo: PAYEE,
    network: "base-sepolia",
    asset: token,
    facilitatorUrl,
  };
  const logger = captureLogger();
  const running = await listen(createApp(agent, { devMode: false, env: {}, logger, payment }));
  const settled = () => logger.lines.filter((l) => l.message === "payment settled").length;
  return { ...running, runs, settled };
}

const SCRIPT = `import { AgentCallError, createAgentClient, type EchoOutput } from "./chain-client.js";

// argv: baseUrl maxPrice jobId [allowed asset] [async]; the key comes from X402_PAYER_KEY (the default).
const [baseUrl = "", maxPrice = "", jobId = "", allowed = "", mode = ""] = process.argv.slice(2);
// Typed as object: this script compiles against a client without the async option too.
const asAsync: object = mode === "async" ? { async: true } : {};
const agent = createAgentClient({
  baseUrl,
  ...(maxPrice ? { maxPrice } : {}),
  ...(allowed ? { allowedAssets: [{ network: "eip155:84532", asset: allowed }] } : {}),
});
try {
  const result = await agent.echo({ text: "on chain" }, { jobId, ...asAsync });
  const output: EchoOutput = result.output;
  const text: string = output.text;
  console.log(JSON.stringify({ ok: true, jobId: result.jobId, text, payment: result.payment ?? null }));
} catch (error) {
  if (!(error instanceof AgentCallError)) throw error;
  console.log(JSON.stringify({ ok: false, errorType: error.errorType, status: error.status, message: error.message }));
}
`;

let server: Server;
let localServer: Server;
let project: TsProject;
let removeTemp: () => Promise<void>;
const balance = (address: Hex, token: Hex = BASE_SEPOLIA_USDC) =>
  usdcBalance(rpcUrl, token, address);

/** What a paid job moves: the payee's and the payer's USDC, the server's echo runs and settlements. */
interface Moved {
  payee: bigint;
  payer: bigint;
  runs: number;
  settled: number;
}
async function moved(payer: Hex): Promise<Moved> {
  return {
    payee: await balance(PAYEE),
    payer: await balance(payer),
    runs: server.runs.echo ?? 0,
    settled: server.settled(),
  };
}
/** Since `before`: `jobs` runs and settlements, each moving PRICE from the payer to the payee. */
async function expectCharged(before: Moved, payer: Hex, jobs: 0 | 1): Promise<void> {
  const price = PRICE * BigInt(jobs);
  expect(await moved(payer)).toEqual({
    payee: before.payee + price,
    payer: before.payer - price,
    runs: before.runs + jobs,
    settled: before.settled + jobs,
  });
}
/** A new funded payer paying through a proxy that loses answers as `mode` says, and what it had before. */
async function throughProxy(
  mode: DropMode,
  test: (payer: { key: Hex; address: Hex }, proxy: DropProxy, before: Moved) => Promise<void>,
  outage?: PollOutage,
): Promise<void> {
  const payer = await fundedPayer();
  const proxy = await dropProxy(server.url, mode, outage);
  try {
    await test(payer, proxy, await moved(payer.address));
  } finally {
    await proxy.close();
  }
}

beforeAll(async () => {
  await buildCli();
  await ensureBaseSepoliaUsdc(rpcUrl);
  server = await startServer(BASE_SEPOLIA_USDC);
  localServer = await startServer(localUsdc);
  ({ project, remove: removeTemp } = await payingProject(
    "client-chain",
    server.url,
    "chain-client.ts",
    SCRIPT,
  ));
}, 180_000);

afterAll(async () => {
  await Promise.all([server?.close(), localServer?.close()]);
  await removeTemp?.();
});

describe("a generated client paying on chain", () => {
  it("pays: the payee gains exactly the price, the payer loses it; the output is typed and printed", async () => {
    const payer = await fundedPayer();
    const before = await moved(payer.address);
    const r = await project.run("pay.js", [server.url, "0.05", "job-chain-1"], {
      X402_PAYER_KEY: payer.key,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const printed = JSON.parse(r.stdout);
    expect(printed).toMatchObject({ ok: true, jobId: "job-chain-1", text: "echo: on chain" });
    expect(printed.payment).toEqual({
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      network: "eip155:84532",
      payer: payer.address,
      amount: "0.01",
    });
    await expectCharged(before, payer.address, 1);
    const mined = await chain.getTransactionReceipt({ hash: printed.payment.transaction });
    expect(mined.status).toBe("success");
    expect(mined.to?.toLowerCase()).toBe(BASE_SEPOLIA_USDC.toLowerCase());
  });

  it("maxPrice below the price: throws before signing; no money moves, the server never sees a payment", async () => {
    await throughProxy("never", async (payer, proxy, before) => {
      const r = await project.run("pay.js", [proxy.url, "0.005", "job-chain-cheap"], {
        X402_PAYER_KEY: payer.key,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(priceRefusal("0.005"));
      expect(proxy.requests).toHaveLength(1);
      expect(proxy.requests[0]!.payment).toBeUndefined();
      expect(proxy.requests[0]!.outcome).toBe(402);
      await expectCharged(before, payer.address, 0);
    });
  });

  it("the paid answer is lost on the way back: the client re-sends the identical request and is charged once", async () => {
    await throughProxy("after-answer", async (payer, proxy, before) => {
      const r = await project.run("pay.js", [proxy.url, "", "job-chain-dropped"], {
        X402_PAYER_KEY: payer.key,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      const printed = JSON.parse(r.stdout);
      expect(printed, r.stdout).toMatchObject({ ok: true, text: "echo: on chain" });

      const paid = proxy.requests.filter((q) => q.payment !== undefined);
      expect(paid.map((q) => q.outcome)).toEqual(["dropped", 200]);
      expect(paid[1]!.payment).toBe(paid[0]!.payment); // one signature
      // ...carrying a payment-identifier id (the 402 declares the extension), read with the x402
      // package's own helper: the server answers the resend of that id from its ledger.
      const sentPayload = JSON.parse(Buffer.from(paid[0]!.payment!, "base64").toString("utf8"));
      expect(extractPaymentIdentifier(sentPayload)).toMatch(/^pay_[0-9a-f]{32}$/);
      expect(paid[1]!.body).toBe(paid[0]!.body); // the identical job
      await expectCharged(before, payer.address, 1);
      // The retry's answer is the settled one: its receipt names the transaction that moved the money.
      const mined = await chain.getTransactionReceipt({ hash: printed.payment.transaction });
      expect(mined.status).toBe("success");
    });
  });

  it("a token that is not a USDC the client knows is refused unless allowedAssets lists it", async () => {
    const payer = await fundedPayer(localUsdc);
    const before = await balance(payer.address, localUsdc);
    const refused = await project.run("pay.js", [localServer.url, "", "job-local-1"], {
      X402_PAYER_KEY: payer.key,
    });
    const printed = JSON.parse(refused.stdout);
    expect(printed).toMatchObject({ ok: false, errorType: "payment", status: 402 });
    expect(printed.message.toLowerCase()).toContain(
      `token ${localUsdc.toLowerCase()} on eip155:84532, which is not a usdc this client knows`,
    );
    expect(printed.message).toContain("nothing was signed");
    expect(await balance(payer.address, localUsdc)).toBe(before);

    const allowed = await project.run("pay.js", [localServer.url, "", "job-local-2", localUsdc], {
      X402_PAYER_KEY: payer.key,
    });
    expect(JSON.parse(allowed.stdout)).toMatchObject({ ok: true, text: "echo: on chain" });
    expect(await balance(payer.address, localUsdc)).toBe(before - PRICE);
  });

  describe("with { async: true } (Prefer: respond-async, then polling the 202's Location)", () => {
    const polls = (proxy: { requests: ProxiedRequest[] }) =>
      proxy.requests.filter((q) => q.method === "GET" && q.path.startsWith("/jobs/job_"));

    it("pays once, polls the queued job, returns the typed result and receipt; charged once", async () => {
      await throughProxy("never", async (payer, proxy, before) => {
        const r = await project.run("pay.js", [proxy.url, "", "job-async-1", "", "async"], {
          X402_PAYER_KEY: payer.key,
        });
        expect(r.exitCode, r.stderr).toBe(0);
        const printed = JSON.parse(r.stdout);
        expect(printed, r.stdout).toMatchObject({
          ok: true,
          jobId: "job-async-1",
          text: "echo: on chain",
        });
        const paid = proxy.requests.filter((q) => q.payment !== undefined);
        expect(paid.map((q) => q.outcome)).toEqual([202]);
        expect(polls(proxy).length).toBeGreaterThanOrEqual(1);
        expect(polls(proxy).at(-1)!.outcome).toBe(200);
        await expectCharged(before, payer.address, 1);
        const mined = await chain.getTransactionReceipt({ hash: printed.payment.transaction });
        expect(mined.status).toBe("success");
      });
    });

    it("the 202 is lost: the identical request (same payment) finds the same job; one run, one charge", async () => {
      await throughProxy("after-answer", async (payer, proxy, before) => {
        const r = await project.run("pay.js", [proxy.url, "", "job-async-lost", "", "async"], {
          X402_PAYER_KEY: payer.key,
        });
        expect(r.exitCode, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout), r.stdout).toMatchObject({ ok: true, text: "echo: on chain" });
        const paid = proxy.requests.filter((q) => q.payment !== undefined);
        // The resend is answered with the same job: its 202 (still queued or running), or, once that job
        // was settled, its kept result.
        expect(paid.map((q) => q.outcome)).toHaveLength(2);
        expect(paid[0]!.outcome).toBe("dropped");
        expect(paid[0]!.upstream).toBe(202); // what was lost: the job queued
        expect([200, 202]).toContain(paid[1]!.outcome);
        expect(paid[1]!.payment).toBe(paid[0]!.payment); // one signature
        expect(paid[1]!.body).toBe(paid[0]!.body); // the identical job
        expect(new Set(polls(proxy).map((q) => q.path)).size).toBeLessThanOrEqual(1); // one job
        await expectCharged(before, payer.address, 1);
      });
    });

    it.each([503, "reset"] as const)(
      "the polls meet an outage for 6 s (%s: a deploy, a restart): asked again until the answer; charged once, the result returned",
      async (as) => {
        await throughProxy(
          "never",
          async (payer, proxy, before) => {
            const r = await project.run(
              "pay.js",
              [proxy.url, "", `job-outage-${as}`, "", "async"],
              {
                X402_PAYER_KEY: payer.key,
              },
            );
            expect(r.exitCode, r.stderr).toBe(0);
            expect(JSON.parse(r.stdout), r.stdout).toMatchObject({
              ok: true,
              text: "echo: on chain",
            });
            const outcomes = polls(proxy).map((q) => q.outcome);
            expect(
              outcomes.filter((o) => o === (as === 503 ? 503 : "dropped")).length,
            ).toBeGreaterThan(3);
            expect(outcomes.at(-1)).toBe(200);
            await expectCharged(before, payer.address, 1);
          },
          { as, ms: 6_000 },
        );
      },
    );

    it("Redis restarted empty while the job ran (its poll answers 404): the identical request once more, answered from the ledger; charged once", async () => {
      const agent = echoAgent("chain-echo", "echo, paid on chain", PRICE, {});
      const payment = {
        payTo: PAYEE,
        network: "base-sepolia",
        asset: BASE_SEPOLIA_USDC,
        facilitatorUrl,
      };
      const payer = await fundedPayer();
      await paidThroughLostQueue(agent, "echo", payment, payer.address, PRICE, async (url) => {
        const r = await project.run("pay.js", [url, "", "job-lost-queue", "", "async"], {
          X402_PAYER_KEY: payer.key,
        });
        expect(r.exitCode, r.stderr).toBe(0);
        const printed = JSON.parse(r.stdout);
        expect(printed, r.stdout).toMatchObject({ ok: true, text: "echo: on chain" });
        expect(printed.payment).toMatchObject({ payer: payer.address });
      });
    });
  });
});
