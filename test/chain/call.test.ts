// `create-agent call` paying a production server on a real chain: anvil with Circle's USDC at Base
// Sepolia's USDC address (the official client pays only USDC contracts it knows), the reference x402
// facilitator, and the real CLI in a child process with X402_PAYER_KEY in its environment.
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CountingServer, runCall } from "../cli/call-helpers.js";
import { PAYEE } from "./accounts.js";
import {
  balance,
  beforePaidCall,
  type CallSeller,
  chainClient,
  fundedPayer,
  expectLocalReceipt,
  LOST_ANSWERS,
  PRICE,
  sellerPayment,
  startCallSeller,
  throughLostAnswer,
} from "./call-seller.js";
import { expectResentVerbatim } from "./call-proxy.js";
import { paidThroughLostQueue } from "./lost-queue.js";
import { job, post, unb64 } from "../runtime/helpers.js";
import {
  extractAndValidatePaymentIdentifier,
  extractPaymentIdentifier,
  validatePaymentIdentifier,
} from "@x402/extensions/payment-identifier";

let server: CountingServer;
let seller: CallSeller;

beforeAll(async () => {
  seller = await startCallSeller();
  server = seller.server;
});
afterAll(() => server?.close());

describe("create-agent call against a production server on chain", () => {
  it("pays: the payee gains exactly the price, the payer loses it, the receipt names the mined tx", async () => {
    const payer = await fundedPayer(1_000_000n);
    const paid = await beforePaidCall(seller, payer.address, "echo");

    const r = await runCall([server.url, "echo", "--input", "message=on chain"], {
      env: { X402_PAYER_KEY: payer.key },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: "on chain" });
    await paid.chargedOnce();

    await expectLocalReceipt(r, payer);
  });

  it("--max-price below the price: refused, the server never sees a payment, no USDC moves", async () => {
    const payer = await fundedPayer(1_000_000n);
    const [payeeBefore, payerBefore] = [await balance(PAYEE), await balance(payer.address)];
    const paidBefore = server.paidExecutes();
    const executesBefore = server.executes();

    const r = await runCall(
      [server.url, "echo", "--input", "message=too dear", "--max-price", "0.005", "--json"],
      { env: { X402_PAYER_KEY: payer.key } },
    );
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({
      ok: false,
      error_type: "price",
      error: '"echo" costs 0.01 USDC per job, more than --max-price 0.005; nothing was sent',
    });
    expect(server.paidExecutes()).toBe(paidBefore);
    expect(server.executes()).toBe(executesBefore);
    expect(await balance(PAYEE)).toBe(payeeBefore);
    expect(await balance(payer.address)).toBe(payerBefore);
  });

  it.each(LOST_ANSWERS)(
    "the connection is lost %s: call re-sends the identical request and is charged once",
    async (_when, mode, capability) => {
      await throughLostAnswer(seller, mode, capability, async (payer, proxy, paid) => {
        const r = await runCall(
          [proxy.url, capability, "--input", "message=once", "--job-id", `retry-${mode}`, "--json"],
          { env: { X402_PAYER_KEY: payer.key } },
        );
        expect(r.exitCode, r.stderr).toBe(0);
        const doc = JSON.parse(r.stdout);
        expect(doc).toMatchObject({
          ok: true,
          job_id: `retry-${mode}`,
          capability,
          output: { text: "once" },
          payment: { network: "eip155:84532", payer: payer.address, amount: "0.01" },
        });
        // One authorization, re-sent verbatim; one handler run; one settlement; one price.
        expectResentVerbatim(proxy, r.stderr, mode);
        // The 402 declared payment-identifier, so the payment carries an id (read with the x402
        // package's own helpers), the same in every resend: the server answers it from its ledger.
        const declared = unb64(
          (await post(server.url, job(capability, { message: "x" }))).headers.get(
            "payment-required",
          )!,
        ).extensions["payment-identifier"];
        expect(validatePaymentIdentifier(declared)).toEqual({ valid: true });
        const sentPayload = unb64(proxy.paid[0]!);
        expect(extractAndValidatePaymentIdentifier(sentPayload).validation).toEqual({
          valid: true,
        });
        expect(extractPaymentIdentifier(sentPayload)).toMatch(/^pay_[0-9a-f]{32}$/);
        await paid.chargedOnce();
        const mined = await chainClient.getTransactionReceipt({ hash: doc.payment.transaction });
        expect(mined.status).toBe("success");
      });
    },
  );
});

describe("create-agent call --async against a production server with async jobs (in-process queue)", () => {
  const jobGets = () =>
    server.requests.filter((r) => r.method === "GET" && r.path.startsWith("/jobs/"));

  it("pays once, is told the job is queued, polls it, prints the output; charged only after completion", async () => {
    const payer = await fundedPayer(1_000_000n);
    const paid = await beforePaidCall(seller, payer.address, "slow");
    const pollsBefore = jobGets().length;

    const running = runCall([server.url, "slow", "--input", "message=later", "--async"], {
      env: { X402_PAYER_KEY: payer.key },
    });
    // Polling has begun while the 3 s job runs: nothing has moved yet.
    while (jobGets().length === pollsBefore && running.exitCode === null)
      await new Promise((r) => setTimeout(r, 50));
    await paid.notYetPaid();
    const r = await running;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: "later" });
    expect(r.stderr).toMatch(
      /queued by the service \(HTTP 202\); polling http:\S+\/jobs\/job_[0-9a-f]{32}/,
    );
    expect(r.stderr).toContain("paid 0.01 USDC on eip155:84532");
    expect(r.stderr).toContain("it is charged once it completes, even if you stop waiting");
    expect(r.stderr).not.toMatch(/job_token|Bearer/);

    expect(server.paidExecutes()).toBeGreaterThanOrEqual(1);
    expect(jobGets().length - pollsBefore).toBeGreaterThanOrEqual(2); // queued/running, then done
    await paid.chargedOnce();
    const tx = /transaction: (0x[0-9a-f]{64})/.exec(r.stderr)?.[1] as Hex | undefined;
    expect((await chainClient.getTransactionReceipt({ hash: tx! })).status).toBe("success");
  });

  it("the 202 is lost: call re-sends the identical request, gets the same job, one run, one charge", async () => {
    await throughLostAnswer(seller, "after-answer", "slow", async (payer, proxy, paid) => {
      const r = await runCall(
        [
          proxy.url,
          "slow",
          "--input",
          "message=once",
          "--job-id",
          "async-lost",
          "--async",
          "--json",
        ],
        { env: { X402_PAYER_KEY: payer.key } },
      );
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({
        ok: true,
        job_id: "async-lost",
        output: { text: "once" },
        payment: { network: "eip155:84532", payer: payer.address, amount: "0.01" },
      });
      expect(r.stderr).toMatch(/sending the identical request again/);
      expect(r.stderr).toMatch(/queued by the service \(HTTP 202\)/);
      // One authorization, re-sent verbatim; the same job polled; one handler run; one price.
      expect(proxy.dropped).toBe(1);
      expect(proxy.paid.length).toBe(2);
      expect(new Set(proxy.paid).size).toBe(1);
      await new Promise((r) => setTimeout(r, 3500)); // a second job, had one been queued, would have run
      await paid.chargedOnce();
    });
  });

  it("Redis restarted empty while the job ran (its poll answers 404): call sends the identical request once, and the ledger answers it; charged once", async () => {
    const payer = await fundedPayer(1_000_000n);
    await paidThroughLostQueue(
      seller.agent,
      "echo",
      sellerPayment!,
      payer.address,
      PRICE,
      async (url) => {
        const r = await runCall([url, "echo", "--input", "message=kept", "--async", "--json"], {
          env: { X402_PAYER_KEY: payer.key },
        });
        expect(r.exitCode, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({
          ok: true,
          output: { text: "kept" },
          payment: { network: "eip155:84532", payer: payer.address, amount: "0.01" },
        });
        expect(r.stderr).toMatch(
          /no longer knows the job at \S+ \(HTTP 404[^)]*\); sending the job's request again, once, identically \(the same payment: it is settled at most once\)/,
        );
      },
    );
  });
});
