// Solana payments that cost the fee payer more than the seller allows, or that can no longer land when the job
// is done, are refused before the handler runs (issue 26, finding 3), through the facilitator and directly
// (SOLANA_FEE_PAYER_KEY): the Solana kit (LiteSVM behind its loopback JSON-RPC, blocks and blockhash life in
// blocks.ts), the official @x402/svm client, and transactions built with @solana/kit in the official layout
// (SetComputeUnitLimit, SetComputeUnitPrice, TransferChecked, memo) with the compute budget a buyer chose.
import {
  AccountRole,
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  getProgramDerivedAddress,
  type Address,
  type Instruction,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from "@solana/kit";
import {
  getSetComputeUnitLimitInstruction,
  getSetComputeUnitPriceInstruction,
} from "@solana-program/compute-budget";
import {
  findAssociatedTokenPda,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import { x402Client } from "@x402/core/client";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeBase64Json } from "../../templates/runtime/payments/x402.js";
import { hostileAgent, type HostileAgent, job, post } from "../runtime/helpers.js";
import type { SolanaAccount, SolanaKit } from "../solana/kit.js";
import { type SolanaServer, type SolanaServers, startSolanaServers } from "./solana-servers.js";

const PRICE = 10_000n;
let servers: SolanaServers;
let kit: SolanaKit;
let payer: SolanaAccount;

beforeAll(async () => {
  servers = await startSolanaServers(() => {
    const agent = hostileAgent();
    // A job during which the payment's blockhash expires (151 blocks pass).
    agent.add("outlived", async () => {
      kit.advanceBlocks(151);
      return { data: {} };
    });
    return agent;
  });
  kit = servers.kit;
  payer = await kit.fundedPayer(1_000_000n);
}, 120_000);

afterAll(async () => {
  await servers?.close();
});

const soon = () => ({ deadline: Math.floor(Date.now() / 1000) + 20 });

const solanaOffer = (server: SolanaServer, body: unknown) => servers.required(server, body);

/**
 * A transaction in the official layout, with the compute budget given (or these compute-budget
 * instructions instead) and `extra` instructions after the memo, partially signed by the payer.
 */
async function budgetTransaction(
  offer: { payTo: string; extra: { feePayer: string } },
  budget: { units: number; microLamports: bigint } | Instruction[],
  extra: Instruction[] = [],
): Promise<string> {
  const owner = (o: string) =>
    findAssociatedTokenPda({
      mint: kit.mint,
      owner: o as Address,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
  const [[source], [destination]] = await Promise.all([owner(payer.address), owner(offer.payTo)]);
  const { value: latest } = await createSolanaRpc(kit.rpcUrl).getLatestBlockhash().send();
  const memo: Instruction = {
    programAddress: "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr" as Address,
    data: new TextEncoder().encode(crypto.randomUUID().replaceAll("-", "")),
  };
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(offer.extra.feePayer as Address, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          ...(Array.isArray(budget)
            ? budget
            : [
                getSetComputeUnitLimitInstruction({ units: budget.units }),
                getSetComputeUnitPriceInstruction({ microLamports: budget.microLamports }),
              ]),
          getTransferCheckedInstruction({
            source,
            mint: kit.mint,
            destination,
            authority: payer.signer,
            amount: PRICE,
            decimals: 6,
          }),
          memo,
          ...extra,
        ],
        m,
      ),
  );
  return getBase64EncodedWireTransaction(await partiallySignTransactionMessageWithSigners(message));
}

/** The x402 v2 PAYMENT-SIGNATURE and v1 X-PAYMENT headers carrying `transaction`. */
const headers = (offer: object, transaction: string) => ({
  2: {
    "payment-signature": encodeBase64Json({
      x402Version: 2,
      accepted: offer,
      payload: { transaction },
    }),
  },
  1: {
    "x-payment": encodeBase64Json({
      x402Version: 1,
      scheme: "exact",
      network: "solana-devnet",
      payload: { transaction },
    }),
  },
});

const COMPUTE_BUDGET = "ComputeBudget111111111111111111111111111111" as Address;
const LIGHTHOUSE = "L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95" as Address;

/**
 * An instruction to Lighthouse's address (the associated-token program's code put there) that funds a
 * new account with the fee payer's SOL: its Create, with the fee payer as the funding signer.
 */
async function lighthouseStandIn(feePayer: Address): Promise<Instruction> {
  const ata = kit.svm.getAccount("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL" as Address);
  if (!ata.exists) throw new Error("the kit has no associated-token program");
  kit.svm.setAccount({ ...ata, address: LIGHTHOUSE });
  const wallet = (await kit.newAccount(0n)).address;
  const [created] = await getProgramDerivedAddress({
    programAddress: LIGHTHOUSE,
    seeds: [wallet, TOKEN_PROGRAM_ADDRESS, kit.mint].map((a) => getAddressEncoder().encode(a)),
  });
  return {
    programAddress: LIGHTHOUSE,
    accounts: [
      { address: feePayer, role: AccountRole.WRITABLE_SIGNER },
      { address: created, role: AccountRole.WRITABLE },
      { address: wallet, role: AccountRole.READONLY },
      { address: kit.mint, role: AccountRole.READONLY },
      { address: "11111111111111111111111111111111" as Address, role: AccountRole.READONLY },
      { address: TOKEN_PROGRAM_ADDRESS, role: AccountRole.READONLY },
    ],
    data: new Uint8Array([]),
  };
}

const runs = (server: SolanaServer) => (server.agent as HostileAgent).calls.echo ?? 0;

describe.each([
  ["directly (SOLANA_FEE_PAYER_KEY)", () => servers.direct, () => servers.feePayer.address],
  ["through the facilitator", () => servers.viaFacilitator, () => servers.facilitator.feePayer],
])("Solana fees and blockhash life, settled %s", (_route, server, feePayer) => {
  /** What a refused payment must leave as it was: the fee payer's SOL, the payer's USDC, the runs. */
  const moved = async () => ({
    lamports: kit.lamports(feePayer()),
    usdc: await kit.usdcBalance(payer.address),
    runs: runs(server()),
  });
  it("SetComputeUnitLimit 1,400,000 at SetComputeUnitPrice 5,000,000 is refused on x402 v2 and v1 before the handler runs, naming the cap; the fee payer spends nothing", async () => {
    const body = job("echo", { text: "fees" }, soon());
    const { offer } = await solanaOffer(server(), body);
    for (const version of [2, 1] as const) {
      const transaction = await budgetTransaction(offer, {
        units: 1_400_000,
        microLamports: 5_000_000n,
      });
      const before = await moved();
      const res = await post(server().running.url, body, headers(offer, transaction)[version]);
      expect(res.status, `x402 v${version}`).toBe(402);
      expect(res.body.error).toMatch(
        /SetComputeUnitLimit asks for 1400000 compute units, above this server's cap of 40000 \(SOLANA_MAX_COMPUTE_UNITS\)/,
      );
      expect(await moved()).toEqual(before);
    }
  });

  it("a price above the cap is refused naming it; a payment at both caps pays, costing the fee payer 10,400 lamports", async () => {
    const body = job("echo", { text: "at the caps" }, soon());
    const { offer } = await solanaOffer(server(), body);
    const dear = await budgetTransaction(offer, { units: 20_000, microLamports: 10_001n });
    const refused = await post(server().running.url, body, headers(offer, dear)[2]);
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatch(
      /SetComputeUnitPrice is 10001 micro-lamports per compute unit, above this server's cap of 10000 \(SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS\)/,
    );
    const tooMany = await budgetTransaction(offer, { units: 40_001, microLamports: 1n });
    expect((await post(server().running.url, body, headers(offer, tooMany)[1])).body.error).toMatch(
      /asks for 40001 compute units, above this server's cap of 40000/,
    );

    const lamports = kit.lamports(feePayer());
    const usdc = await kit.usdcBalance(payer.address);
    const atCaps = await budgetTransaction(offer, { units: 40_000, microLamports: 10_000n });
    const paid = await post(server().running.url, body, headers(offer, atCaps)[2]);
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.output).toEqual({ text: "at the caps" });
    // Two signatures at 5,000 lamports, plus 40,000 units at 10,000 micro-lamports (400 lamports).
    expect(lamports - kit.lamports(feePayer())).toBe(10_400n);
    expect(usdc - (await kit.usdcBalance(payer.address))).toBe(PRICE);
  });

  // Found by a hostile tester: the runtime reads a compute-budget value and ignores the bytes after it, so
  // a price of 5,000,000 micro-lamports with one byte more was read as none; and the official checks let
  // a Lighthouse instruction through with any accounts, the fee payer's among them (it funded an account
  // the buyer chose, 2,039,280 lamports of rent). Lighthouse is not in the kit: the associated-token
  // program's code stands in at its address (its Create spends a funding signer's SOL the same way).
  it("a compute-budget instruction with a byte more, or an instruction naming the fee payer, is refused on v2 and v1 before the handler runs; the fee payer spends nothing", async () => {
    const body = job("echo", { text: "fee payer" }, soon());
    const { offer } = await solanaOffer(server(), body);
    const data = (bytes: number[]): Instruction => ({
      programAddress: COMPUTE_BUDGET,
      data: new Uint8Array(bytes),
    });
    const limit = data([2, 0x40, 0x9c, 0, 0]); // 40,000 units
    const trailing = await budgetTransaction(offer, [
      limit,
      data([3, 0x40, 0x4b, 0x4c, 0, 0, 0, 0, 0, 0]), // 5,000,000 micro-lamports, and a byte more
    ]);
    const lighthouse = await lighthouseStandIn(offer.extra.feePayer as Address);
    const exposed = await budgetTransaction(offer, { units: 40_000, microLamports: 1n }, [
      lighthouse,
    ]);
    for (const [transaction, reason] of [
      [
        trailing,
        /instruction 2 is a compute-budget instruction other than SetComputeUnitLimit \(5 bytes\) or SetComputeUnitPrice \(9 bytes\)/,
      ],
      [exposed, /instruction 5 names the fee payer\. The fee payer only pays the fees/],
    ] as const)
      for (const version of [2, 1] as const) {
        const before = await moved();
        const res = await post(server().running.url, body, headers(offer, transaction)[version]);
        expect(res.status, `x402 v${version}`).toBe(402);
        expect(res.body.error).toMatch(reason);
        expect(await moved()).toEqual(before);
      }
  });

  it("a payment whose blockhash expires before the job's deadline plus the settlement margin is refused with a 402 naming it; nothing runs or moves", async () => {
    const body = job("echo", { text: "late" }, soon());
    const { required } = await solanaOffer(server(), body);
    const client = new x402Client().register(
      kit.network as `${string}:${string}`,
      new ExactSvmScheme(payer.signer, { rpcUrl: kit.rpcUrl }),
    );
    const solanaOnly = {
      ...required,
      accepts: required.accepts.filter((a: { network: string }) => a.network === kit.network),
    };
    const payload = await client.createPaymentPayload(solanaOnly);
    // 140 blocks later the blockhash has 10 left (about 4 s): less than the 20 s deadline plus 15 s to settle.
    kit.advanceBlocks(140);
    // On a node 140 blocks take a minute; the server reads the block height at most once a second.
    await new Promise((r) => setTimeout(r, 1_100));
    try {
      const before = { usdc: await kit.usdcBalance(payer.address), runs: runs(server()) };
      const res = await post(server().running.url, body, {
        "payment-signature": encodeBase64Json(payload),
      });
      expect(res.status).toBe(402);
      expect(res.body.error).toMatch(
        /refused before running the job: the transaction's blockhash expires before the job's deadline plus 15 s to settle .*: it can land for (10|9|8) more blocks/,
      );
      expect({ usdc: await kit.usdcBalance(payer.address), runs: runs(server()) }).toEqual(before);
    } finally {
      kit.advanceBlocks(11); // past its life: the kit's next blockhash is fresh
    }
  });

  it("when the blockhash expires during the job, the answer says the transaction did not land on Solana and cannot (no EVM token advice); nothing is charged", async () => {
    const paying = new x402Client().register(
      kit.network as `${string}:${string}`,
      new ExactSvmScheme(payer.signer, { rpcUrl: kit.rpcUrl }),
    );
    const body = job("outlived", { text: "x" }, soon());
    const { required } = await solanaOffer(server(), body);
    const solanaOnly = {
      ...required,
      accepts: required.accepts.filter((a: { network: string }) => a.network === kit.network),
    };
    const payload = await paying.createPaymentPayload(solanaOnly);
    const usdc = await kit.usdcBalance(payer.address);
    const res = await post(server().running.url, body, {
      "payment-signature": encodeBase64Json(payload),
    });
    expect(res.status).toBe(402);
    expect(res.body.error).toMatch(
      /not settled, so the result is withheld: .*Nothing was charged\. The transaction did not land on Solana and its blockhash has expired, so it never can: sign a new transaction to run the job again\.$/,
    );
    expect(res.body.error).not.toMatch(/token|authorization/);
    expect(await kit.usdcBalance(payer.address)).toBe(usdc);
  });
});
