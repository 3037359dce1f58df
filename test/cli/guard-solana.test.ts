// The payer's guard on Solana (src/caller/guard-svm.ts checkSignedSolanaPayment, with the reader of
// src/caller/solana-payer.ts over the real @solana/kit and @solana-program/token): a payment built by the
// official @x402/svm client passes; transactions built with @solana/kit that move other money are refused.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as kit from "@solana/kit";
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  type Instruction,
  type KeyPairSigner,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
} from "@solana/kit";
import {
  getSetComputeUnitLimitInstruction,
  getSetComputeUnitPriceInstruction,
} from "@solana-program/compute-budget";
import { getTransferSolInstruction } from "@solana-program/system";
import * as token from "@solana-program/token";
import {
  findAssociatedTokenPda,
  getApproveInstruction,
  getMintEncoder,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkPaymentToSend,
  choosePaymentNetwork,
  networkFamily,
  PAYER_NETWORKS,
  rpcUrlVariable,
} from "../../src/caller/payer-families.js";
import { checkSignedSolanaPayment, SOLANA_PROGRAMS } from "../../src/caller/guard-svm.js";
import { readOffers } from "../../src/caller/guard.js";
import { assetAllowed, NETWORK_USDC } from "../../src/caller/guard-asset.js";
import { solanaReader } from "../../src/caller/solana-payer.js";

const DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
const USDC = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU" as Address;
const OTHER_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" as Address;
const BLOCKHASH = "EETubP5AKHgjPAhzPAFcb8BAY1hMH639CuCFCBi4PpVh" as Blockhash;
const reader = solanaReader(kit, token);
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");

let payer: KeyPairSigner;
let payee: Address;
let feePayer: Address;
let rpc: Server;
let rpcUrl: string;

/** A JSON-RPC endpoint answering getAccountInfo for the USDC mint (6 decimals, SPL Token), encoded by @solana-program/token. */
async function mintRpc(): Promise<Server> {
  const mint = getMintEncoder().encode({
    mintAuthority: null,
    supply: 10n ** 12n,
    decimals: 6,
    isInitialized: true,
    freezeAuthority: null,
  });
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const { id, method, params } = JSON.parse(body);
      const result =
        method === "getAccountInfo" && params[0] === USDC
          ? {
              context: { slot: 1 },
              value: {
                data: [Buffer.from(mint).toString("base64"), "base64"],
                executable: false,
                lamports: 1_000_000_000,
                owner: TOKEN_PROGRAM_ADDRESS,
                rentEpoch: 0,
                space: mint.length,
              },
            }
          : { context: { slot: 1 }, value: null };
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ jsonrpc: "2.0", id, result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

beforeAll(async () => {
  payer = await generateKeyPairSigner();
  payee = (await generateKeyPairSigner()).address;
  feePayer = (await generateKeyPairSigner()).address;
  rpc = await mintRpc();
  rpcUrl = `http://127.0.0.1:${(rpc.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => rpc?.close(() => resolve())));

const requirement = (amount = "10000") => ({
  scheme: "exact",
  network: DEVNET,
  amount,
  asset: USDC,
  payTo: payee,
  maxTimeoutSeconds: 60,
  extra: { feePayer, recentBlockhash: BLOCKHASH },
});
const offersOf = (amount = "10000") =>
  readOffers({ x402Version: 2, accepts: [requirement(amount)] });
const limit = () => ({ maxAtomic: 10_000n, payer: payer.address, validForAtMost: 3900 });

/** The header the official client sends: x402 v2, accepted = the requirement, payload from ExactSvmScheme. */
async function official(amount = "10000"): Promise<string> {
  const accepted = requirement(amount);
  const { payload } = await new ExactSvmScheme(payer, { rpcUrl }).createPaymentPayload(
    2,
    accepted as never,
  );
  return b64({ x402Version: 2, accepted, payload });
}

/** A transaction built with @solana/kit: the official layout's instructions, or others. */
async function built(
  instructions: Instruction[],
  options: { feePayer?: Address; accepted?: object } = {},
): Promise<string> {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(options.feePayer ?? feePayer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: BLOCKHASH, lastValidBlockHeight: 0n },
        m,
      ),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const signed = await partiallySignTransactionMessageWithSigners(message);
  return b64({
    x402Version: 2,
    accepted: options.accepted ?? requirement(),
    payload: { transaction: getBase64EncodedWireTransaction(signed) },
  });
}

async function transfer(
  more: { amount?: bigint; mint?: Address; to?: Address; decimals?: number; from?: Address } = {},
): Promise<Instruction> {
  const mint = more.mint ?? USDC;
  const [source] = await findAssociatedTokenPda({
    mint,
    owner: payer.address,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  const [destination] = await findAssociatedTokenPda({
    mint,
    owner: more.to ?? payee,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  return getTransferCheckedInstruction({
    source: more.from ?? source,
    mint,
    destination,
    authority: payer,
    amount: more.amount ?? 10_000n,
    decimals: more.decimals ?? 6,
  });
}
const budget = () => [
  getSetComputeUnitLimitInstruction({ units: 20_000 }),
  getSetComputeUnitPriceInstruction({ microLamports: 1n }),
];
const memo: Instruction = {
  programAddress: SOLANA_PROGRAMS.memo as Address,
  data: new TextEncoder().encode("0123abcd"),
};

describe("checkSignedSolanaPayment", () => {
  it("passes the official @x402/svm client's payment and reports what it transfers", async () => {
    const header = await official();
    const signed = await checkSignedSolanaPayment(header, offersOf(), limit(), reader);
    expect(signed).toEqual({
      x402Version: 2,
      network: DEVNET,
      amount: 10_000n,
      payer: payer.address,
      payTo: payee,
      asset: USDC,
    });
    // The dispatcher sends a Solana payment here, and refuses it without a reader.
    expect((await checkPaymentToSend(header, offersOf(), limit(), reader)).amount).toBe(10_000n);
    await expect(checkPaymentToSend(header, offersOf(), limit())).rejects.toThrow(
      "is a Solana transaction, and no Solana reader was loaded to check it",
    );
  });

  it("refuses a payment that is two kinds at once (a Solana transaction and an EVM authorization): neither check may speak for the other", async () => {
    const header = await official();
    const decoded = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
    decoded.payload.authorization = { from: payer.address, to: payee, value: "10000" };
    await expect(checkPaymentToSend(b64(decoded), offersOf(), limit(), reader)).rejects.toThrow(
      "the payment about to be sent is of two kinds at once; it was not sent",
    );
  });

  it("the same layout built with @solana/kit passes too (the control of the cases below)", async () => {
    const header = await built([...budget(), await transfer(), memo]);
    expect((await checkSignedSolanaPayment(header, offersOf(), limit(), reader)).amount).toBe(
      10_000n,
    );
  });

  it("refuses the official client's payment of an offer above the cap", async () => {
    const header = await official("1000000");
    await expect(
      checkSignedSolanaPayment(header, offersOf("1000000"), limit(), reader),
    ).rejects.toThrow(
      "transfers 1000000 atomic units, more than the 10000 allowed; it was not sent",
    );
  });

  it.each<[string, () => Promise<string>, string]>([
    [
      "an amount unlike the offer it accepts",
      async () => built([...budget(), await transfer({ amount: 5000n }), memo]),
      "transfers 5000 atomic units for an offer of 10000",
    ],
    [
      "another mint",
      async () =>
        built([...budget(), await transfer({ mint: OTHER_MINT }), memo], {
          accepted: { ...requirement(), asset: OTHER_MINT },
        }),
      "matches none of the offers that were checked",
    ],
    [
      "another mint than the one accepted",
      async () => built([...budget(), await transfer({ mint: OTHER_MINT }), memo]),
      `transfers the mint ${OTHER_MINT} for an offer of "${USDC.slice(0, 40)}`,
    ],
    [
      "another destination",
      async () => built([...budget(), await transfer({ to: feePayer }), memo]),
      "matches none of the offers that were checked",
    ],
    [
      "a second transfer",
      async () => built([...budget(), await transfer(), await transfer(), memo]),
      "holds 2 token transfers, not exactly one",
    ],
    [
      "no transfer at all",
      async () => built([...budget(), memo]),
      "holds 0 token transfers, not exactly one",
    ],
    [
      "a SOL transfer beside the payment",
      async () =>
        built([
          ...budget(),
          await transfer(),
          getTransferSolInstruction({ source: payer, destination: payee, amount: 1_000_000_000n }),
        ]),
      "holds instruction 3 of program 11111111111111111111111111111111",
    ],
    [
      "a token approval beside the payment",
      async () => {
        const [source] = await findAssociatedTokenPda({
          mint: USDC,
          owner: payer.address,
          tokenProgram: TOKEN_PROGRAM_ADDRESS,
        });
        return built([
          ...budget(),
          await transfer(),
          getApproveInstruction({ source, delegate: payee, owner: payer, amount: 10n ** 12n }),
        ]);
      },
      `holds instruction 3 of program ${TOKEN_PROGRAM_ADDRESS} that is not a TransferChecked`,
    ],
    [
      "a transfer from an account that is not the payer's own",
      async () => built([...budget(), await transfer({ from: payee }), memo]),
      "not the payer's own token account",
    ],
    [
      "a token of other decimals",
      async () => built([...budget(), await transfer({ decimals: 0 }), memo]),
      "transfers a token of 0 decimals, not USDC's 6",
    ],
    [
      "the payer as fee payer",
      async () => built([...budget(), await transfer(), memo], { feePayer: payer.address }),
      "its fee payer",
    ],
    [
      "an undecodable transaction",
      async () =>
        b64({ x402Version: 2, accepted: requirement(), payload: { transaction: "AAAA" } }),
      "is not a Solana transaction this payer can read",
    ],
  ])("refuses %s", async (_, header, message) => {
    await expect(
      checkSignedSolanaPayment(await header(), offersOf(), limit(), reader),
    ).rejects.toThrow(message);
  });

  it("refuses a payment signed by another account than the payer", async () => {
    const header = await official();
    const other = (await generateKeyPairSigner()).address;
    await expect(
      checkSignedSolanaPayment(
        header,
        offersOf(),
        { maxAtomic: 10_000n, payer: other, validForAtMost: 3900 },
        reader,
      ),
    ).rejects.toThrow(`is signed for the account ${payer.address}, not the payer ${other}`);
  });
});

describe("the payer's networks", () => {
  it("name the same CAIP-2 ids as the server's network table", async () => {
    const { EVM_NETWORKS } = await import("../../templates/runtime/payments/evm/networks.js");
    const { SOLANA_NETWORKS } = await import("../../templates/runtime/payments/svm/networks.js");
    const KNOWN_NETWORKS = { ...EVM_NETWORKS, ...SOLANA_NETWORKS };
    const table = Object.fromEntries(
      Object.entries(KNOWN_NETWORKS).map(([name, known]) => [name, known.caip2]),
    );
    expect(PAYER_NETWORKS).toEqual(table);
    for (const [name, known] of Object.entries(KNOWN_NETWORKS))
      expect(networkFamily(name)).toBe(known.family);
    // The token a payer pays in: each network's USDC, the same address as the server's table.
    expect(NETWORK_USDC).toEqual(
      Object.fromEntries(Object.values(KNOWN_NETWORKS).map((known) => [known.caip2, known.asset])),
    );
  });

  it("a payer pays only the network's USDC unless a token is allowed: USDT on Solana mainnet, which @x402/svm knows, is not", () => {
    const USDT = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB";
    expect(assetAllowed("solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", [])).toBe(true);
    expect(assetAllowed("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", USDT, [])).toBe(false);
    expect(assetAllowed("solana", USDT, [{ asset: USDT }])).toBe(true);
    expect(assetAllowed("solana", USDT, [{ network: "solana-devnet", asset: USDT }])).toBe(false);
    // EVM addresses in any letter case; an unknown chain has no USDC of its own.
    expect(assetAllowed("base-sepolia", "0x036cbd53842c5426634e7929541ec2318f3dcf7e", [])).toBe(
      true,
    );
    expect(assetAllowed("eip155:31337", "0x036CbD53842c5426634e7929541eC2318f3dCF7e", [])).toBe(
      false,
    );
  });

  it("X402_RPC_URL_<NET> follows the server's rule, from the known name of a CAIP-2 id", () => {
    expect(rpcUrlVariable("solana-devnet")).toBe("X402_RPC_URL_SOLANA_DEVNET");
    expect(rpcUrlVariable(DEVNET)).toBe("X402_RPC_URL_SOLANA_DEVNET");
    expect(rpcUrlVariable("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp")).toBe("X402_RPC_URL_SOLANA");
    expect(rpcUrlVariable("solana:AbCdEfGhJkLmNpQrStUvWxYz12345678")).toBe(
      "X402_RPC_URL_SOLANA_ABCDEFGHJKLMNPQRSTUVWXYZ12345678",
    );
  });

  it("choosePaymentNetwork: the wanted one if offered, else the first with a key, Solana only within its deadline", () => {
    const offers = readOffers({
      x402Version: 2,
      accepts: [
        { scheme: "exact", network: DEVNET, amount: "1", asset: USDC, payTo: "x" },
        { scheme: "exact", network: "eip155:84532", amount: "1", asset: "0x1", payTo: "y" },
      ],
    });
    const both = { evm: true, svm: true };
    expect(choosePaymentNetwork(offers, "base-sepolia", both, 300)).toEqual({
      ok: true,
      id: "eip155:84532",
      family: "evm",
    });
    expect(choosePaymentNetwork(offers, "base", both, 300)).toEqual({
      ok: false,
      problem: "not-offered",
      offered: [DEVNET, "eip155:84532"],
    });
    expect(choosePaymentNetwork(offers, undefined, both, 30)).toMatchObject({ id: DEVNET });
    expect(choosePaymentNetwork(offers, undefined, both, 31)).toMatchObject({
      id: "eip155:84532",
    });
    expect(choosePaymentNetwork(offers, undefined, { evm: false, svm: true }, 31)).toMatchObject({
      ok: false,
      problem: "deadline",
    });
    expect(choosePaymentNetwork(offers, undefined, { evm: false, svm: false }, 30)).toEqual({
      ok: false,
      problem: "no-key",
      offered: [DEVNET, "eip155:84532"],
    });
  });
});
