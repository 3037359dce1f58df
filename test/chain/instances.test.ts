// Several instances, one settler key (direct settlement): every transaction from that account
// needs its own account nonce. Two instances settling at the same moment must not lose paid
// results to "nonce too low": with a shared ledger its lock serializes the sends; without one the
// loser re-reads the nonce and sends again. Anvil automines, so a race shows up at once.
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import type { Ledger } from "../../templates/runtime/ledger/ledger.js";
import { createMemoryLedger } from "../../templates/runtime/ledger/memory.js";
import type { DirectSettlerOptions } from "../../templates/runtime/payments/evm/chain.js";
import { createDirectSettler } from "../../templates/runtime/payments/evm/onchain/direct-settlement.js";
import type { ResolvedNetwork } from "../../templates/runtime/payments/networks.js";
import type { SettlementResult } from "../../templates/runtime/payments/settlement.js";
import type { VerifiedPayment } from "../../templates/runtime/types.js";
import {
  captureLogger,
  job,
  listen,
  makeAgent,
  post,
  signAuthorization,
  unb64,
  type Running,
} from "../runtime/helpers.js";
import { PAYEE, SETTLER_KEY } from "./accounts.js";
import { asset, chainId, client, domain, rpcUrl, signOffer } from "./context.js";
import { mintUsdc, usdcBalance } from "./usdc.js";

const PRICE = 10_000n; // echo's price: 0.01 USDC
const JOBS = 20;

const network: ResolvedNetwork = {
  v1Name: "base-sepolia",
  caip2: `eip155:${chainId}`,
  chainId,
  asset,
  assetName: "USDC",
  assetVersion: "2",
};

/** `count` fresh payers holding exactly the price each (one job each, so every authorization is distinct). */
async function freshPayers(count: number): Promise<PrivateKeyAccount[]> {
  const payers: PrivateKeyAccount[] = [];
  for (let i = 0; i < count; i++) {
    const account = privateKeyToAccount(generatePrivateKey());
    await mintUsdc(rpcUrl, asset, account.address, PRICE); // one by one: the minter has one nonce too
    payers.push(account);
  }
  return payers;
}

/** A lock shared by the instances given it, like the memory ledger's: one holder per name. */
function sharedLock(): NonNullable<DirectSettlerOptions["exclusive"]> {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(name: string, _holdMs: number, work: () => Promise<T>): Promise<T> => {
    const run = (tails.get(name) ?? Promise.resolve()).then(work, work);
    tails.set(
      name,
      run.catch(() => undefined),
    );
    return run;
  };
}

/**
 * What every variant must show: 20 distinct transactions, each mined successfully, and the payee
 * richer by exactly 20 prices.
 */
async function expectAllSettled(hashes: Hex[], payeeBefore: bigint): Promise<void> {
  expect(new Set(hashes).size).toBe(JOBS);
  for (const hash of hashes)
    expect((await client.getTransactionReceipt({ hash })).status, hash).toBe("success");
  expect(await usdcBalance(rpcUrl, asset, PAYEE)).toBe(payeeBefore + BigInt(JOBS) * PRICE);
}

const VARIANTS = [
  ["each with its own lock (no shared ledger: the nonce race is retried)", false],
  ["sharing one lock (one ledger: sends are serialized)", true],
] as const;

describe.each(VARIANTS)("two direct settlers, one settler key, %s", (_name, shared) => {
  it(`settles ${JOBS} concurrent payments split across both: all mined, all paid`, async () => {
    const lock = shared ? sharedLock() : undefined;
    const settlers = [0, 1].map(() =>
      createDirectSettler({
        rpcUrl,
        settlerKey: SETTLER_KEY,
        network,
        timeoutSeconds: 30,
        ...(lock ? { exclusive: lock } : {}),
      }),
    );
    const payments = await Promise.all(
      (await freshPayers(JOBS)).map(async (payer): Promise<VerifiedPayment> => {
        const { authorization, signature } = await signAuthorization(payer, {
          to: PAYEE,
          value: String(PRICE),
          domain,
        });
        return {
          family: "evm",
          x402Version: 2,
          scheme: "exact",
          network: network.caip2,
          payer: payer.address,
          amount: authorization.value,
          validBefore: Number(authorization.validBefore),
          authorization,
          signature,
          chainId,
          asset,
          payload: {},
          requirement: {},
        };
      }),
    );
    const payeeBefore = await usdcBalance(rpcUrl, asset, PAYEE);

    const settled = await Promise.allSettled(
      payments.map((payment, i) => settlers[i % 2]!.settle(payment)),
    );
    const failures = settled.flatMap((s) => (s.status === "rejected" ? [String(s.reason)] : []));
    expect(failures).toEqual([]);
    const results = settled.map((s) => (s as PromiseFulfilledResult<SettlementResult>).value);
    await expectAllSettled(
      results.map((r) => r.transaction),
      payeeBefore,
    );
  });
});

describe.each(VARIANTS)("two app instances, one settler key, %s", (_name, shared) => {
  const running: Running[] = [];
  const ledgers: Ledger[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((app) => app.close()));
    await Promise.all(ledgers.splice(0).map((ledger) => ledger.close()));
  });

  const start = async (ledger: Ledger): Promise<Running> => {
    const app = await listen(
      createApp(makeAgent(), {
        devMode: false,
        env: {},
        logger: captureLogger(),
        ledger,
        payment: {
          payTo: PAYEE,
          network: "base-sepolia",
          asset,
          rpcUrl,
          settlerKey: SETTLER_KEY,
        },
      }),
    );
    running.push(app);
    return app;
  };

  it(`${JOBS} concurrent paid jobs split across both: all 200, all settled on chain`, async () => {
    const one = createMemoryLedger();
    ledgers.push(one);
    const other = shared ? one : createMemoryLedger();
    if (!shared) ledgers.push(other);
    const apps = [await start(one), await start(other)];

    const accepted = {
      scheme: "exact",
      network: network.caip2,
      amount: String(PRICE),
      asset,
      payTo: PAYEE,
      maxTimeoutSeconds: 300,
      extra: { name: "USDC", version: "2" },
    };
    const requests = await Promise.all(
      (await freshPayers(JOBS)).map(async (payer, i) => {
        const { header } = await signOffer(payer, accepted, { to: PAYEE, value: String(PRICE) });
        return { url: apps[i % 2]!.url, header, text: `job ${i}` };
      }),
    );
    const payeeBefore = await usdcBalance(rpcUrl, asset, PAYEE);

    const answers = await Promise.all(
      requests.map(({ url, header, text }) =>
        post(url, job("echo", { text }), { "payment-signature": header }),
      ),
    );
    const refused = answers.flatMap((res) => (res.status === 200 ? [] : [res.text]));
    expect(refused).toEqual([]);
    answers.forEach((res, i) => expect(res.body.output).toEqual({ text: `job ${i}` }));

    const receipts = answers.map((res) => unb64(res.headers.get("payment-response")!));
    for (const receipt of receipts) expect(receipt).toMatchObject({ success: true });
    await expectAllSettled(
      receipts.map((r) => r.transaction as Hex),
      payeeBefore,
    );
  });
});
