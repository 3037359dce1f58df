// `create-agent call` paying on Solana (issue 17): the real CLI in a child process with SOLANA_PAYER_KEY, the
// official @x402/svm client, a real Solana runtime (the kit's LiteSVM behind its JSON-RPC) and the reference
// facilitator with the SVM scheme; the seller is made of real x402 parts (test/solana/seller.ts) and offers
// Solana devnet beside Base Sepolia on anvil (Circle's USDC, the reference EVM facilitator). Balances are read
// from the runtime and the chain.
import type { Address } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCall } from "../cli/call-helpers.js";
import { buildCli } from "../cli/client-project.js";
import type { SolanaKit, SvmFacilitator } from "../solana/kit.js";
import type { Seller, SellerPool } from "../solana/seller.js";
import { BASE_SEPOLIA, PRICE, type SolanaSellers, startSolanaSellers } from "./solana-sellers.js";
import { BASE_SEPOLIA_USDC, usdcBalance } from "./usdc.js";

const { rpcUrl } = inject("chain");
/** Tether's USDT mint on Solana mainnet: a 6-decimal token that is not USDC. */
const USDT = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB" as Address;

let market: SolanaSellers;
let kit: SolanaKit;
let facilitator: SvmFacilitator;
let solanaPayee: string;
let sellers: SellerPool;
const seller = (networks: string[], askedUsd?: string): Promise<Seller> =>
  market.seller(networks, askedUsd);

beforeAll(async () => {
  await buildCli();
  market = await startSolanaSellers();
  ({ kit, facilitator, solanaPayee, pool: sellers } = market);
}, 180_000);

afterAll(async () => {
  await market?.close();
});

describe("create-agent call on Solana", () => {
  it("pays 0.01 USDC on Solana with SOLANA_PAYER_KEY: the payee gains the price, the receipt is what was signed, the default deadline fits Solana", async () => {
    const shop = await seller([kit.network]);
    const payer = await kit.fundedPayer(1_000_000n);
    const payeeBefore = await kit.usdcBalance(solanaPayee);

    const r = await runCall([shop.url, "echo", "--input", "message=on solana"], {
      env: market.payerEnv(payer.secretKey),
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: "on solana" });
    expect(await kit.usdcBalance(solanaPayee)).toBe(payeeBefore + PRICE);
    expect(await kit.usdcBalance(payer.address)).toBe(1_000_000n - PRICE);
    expect(shop.settled).toHaveLength(1);
    expect(r.stderr).toContain(`paid 0.01 USDC on ${kit.network}`);
    expect(r.stderr).toContain(`transaction: ${shop.settled[0]!.transaction}`);
    expect(r.stderr).not.toContain("https://explorer.solana.com"); // a local agent: its chain may be local
    expect(r.stderr).toContain("explorer:    none: the agent runs on this machine");
    expect(r.stderr).toContain(`payer:       ${payer.address}`);
    expect(r.stderr + r.stdout).not.toContain(payer.secretKey);
    // Solana was the only key held: the job was sent due within 30 s, both times.
    expect(shop.requests.map((q) => q.deadlineIn <= 30 && q.deadlineIn >= 25)).toEqual([
      true,
      true,
    ]);
  });

  it("takes solana-keygen's JSON byte array too; machine mode reports the payment", async () => {
    const shop = await seller([kit.network]);
    const payer = await kit.fundedPayer(1_000_000n);
    const r = await runCall([shop.url, "echo", "--input", "message=json key", "--json"], {
      env: market.payerEnv(payer.keygenJson),
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: true,
      payment: {
        network: kit.network,
        payer: payer.address,
        amount: "0.01",
        transaction: shop.settled[0]!.transaction,
      },
    });
    expect(await kit.usdcBalance(payer.address)).toBe(1_000_000n - PRICE);
  });

  it("--network chooses among the offered networks; by default the first one the caller holds a key for (whose deadline it fits)", async () => {
    const shop = await seller([BASE_SEPOLIA, kit.network]);
    const solanaPayer = await kit.fundedPayer(1_000_000n);
    const evm = await market.evmPayer();
    const env = { ...market.payerEnv(solanaPayer.secretKey), X402_PAYER_KEY: evm.key };
    const evmBefore = await usdcBalance(rpcUrl, BASE_SEPOLIA_USDC, evm.address);

    const onSolana = await runCall(
      [shop.url, "echo", "--input", "message=chosen", "--network", "solana-devnet"],
      { env },
    );
    expect(onSolana.exitCode, onSolana.stderr).toBe(0);
    expect(onSolana.stderr).toContain(`paid 0.01 USDC on ${kit.network}`);
    expect(await kit.usdcBalance(solanaPayer.address)).toBe(1_000_000n - PRICE);
    expect(await usdcBalance(rpcUrl, BASE_SEPOLIA_USDC, evm.address)).toBe(evmBefore);
    expect(shop.requests.at(-1)!.deadlineIn).toBeLessThanOrEqual(30);

    // No --network: Base Sepolia, offered first, with the 300 s default deadline.
    const byDefault = await runCall([shop.url, "echo", "--input", "message=default"], { env });
    expect(byDefault.exitCode, byDefault.stderr).toBe(0);
    expect(byDefault.stderr).toContain(`paid 0.01 USDC on ${BASE_SEPOLIA}`);
    expect(await usdcBalance(rpcUrl, BASE_SEPOLIA_USDC, evm.address)).toBe(evmBefore - PRICE);
    expect(await kit.usdcBalance(solanaPayer.address)).toBe(1_000_000n - PRICE);

    // Solana offered first, both keys, the default (EVM-sized) deadline: Solana cannot cover it, Base Sepolia pays.
    const solanaFirst = await seller([kit.network, BASE_SEPOLIA]);
    const skipped = await runCall([solanaFirst.url, "echo", "--input", "message=too long"], {
      env,
    });
    expect(skipped.exitCode, skipped.stderr).toBe(0);
    expect(skipped.stderr).toContain(`paid 0.01 USDC on ${BASE_SEPOLIA}`);
    expect(await kit.usdcBalance(solanaPayer.address)).toBe(1_000_000n - PRICE);

    // A network the 402 does not offer: refused, naming what it offers; nothing signed.
    const only = await seller([kit.network]);
    const absent = await runCall(
      [only.url, "echo", "--input", "message=x", "--network", "base-sepolia", "--json"],
      { env },
    );
    expect(absent.exitCode).toBe(1);
    expect(JSON.parse(absent.stdout).error).toBe(
      `${only.url}/execute does not offer payment on --network base-sepolia; it offers: ${kit.network}; nothing was signed`,
    );
    expect(only.requests.filter((q) => q.payment)).toHaveLength(0);
  });

  it("a deadline a Solana payment cannot cover is refused before anything is sent or signed", async () => {
    const { shop, payer, env } = await market.solanaShop();
    const r = await runCall(
      [
        shop.url,
        "echo",
        "--input",
        "message=x",
        "--network",
        "solana-devnet",
        "--deadline-seconds",
        "120",
      ],
      { env },
    );
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(
      "a job paid on Solana must be due within 30 s (its transaction lives about 60 s, settlement included), and this one is due in 120 s",
    );
    expect(r.stderr).toContain("--network with an EVM network");
    expect(r.stderr).toContain("nothing was sent");
    expect(shop.requests).toHaveLength(0);

    // Only a Solana key, an explicit long deadline and no --network: the 402 arrives, nothing is signed.
    const implicit = await runCall(
      [shop.url, "echo", "--input", "message=x", "--deadline-seconds", "120"],
      { env },
    );
    expect(implicit.exitCode).toBe(1);
    expect(implicit.stderr).toContain("can be paid with the caller's key only on Solana");
    expect(implicit.stderr).toContain("must be due within 30 s");
    await market.expectNothingPaid(shop, payer);
  });

  it("--async on Solana is refused before anything is signed (a Solana payment cannot wait for a queued job)", async () => {
    const { shop, payer, env } = await market.solanaShop();
    const r = await runCall([shop.url, "echo", "--input", "message=x", "--async"], { env });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("async jobs are paid on EVM networks only; nothing was signed");
    await market.expectNothingPaid(shop, payer);
  });

  it("a seller asking USDT (mainnet's mint) on Solana: nothing signed, a clear refusal; with --asset it pays and reports the token signed", async () => {
    kit.addMint(USDT);
    await kit.openTokenAccount(solanaPayee, USDT);
    const payer = await kit.fundedPayer(1_000_000n, USDT);
    await kit.openTokenAccount(payer.address, kit.mint, 1_000_000n);
    const shop = await sellers.startWith({
      options: [{ network: kit.network, payTo: solanaPayee, asset: USDT }],
      facilitators: [facilitator.url],
    });
    const env = market.payerEnv(payer.secretKey);
    const refused = await runCall(
      [shop.url, "echo", "--input", "message=x", "--network", "solana-devnet"],
      { env },
    );
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(
      `asks to be paid in the token ${USDT} on ${kit.network}, which is not that network's USDC (${kit.mint}): to pay in it anyway, pass --asset <address>`,
    );
    expect(refused.stderr).toContain("nothing was signed");
    expect(shop.requests.filter((q) => q.payment)).toHaveLength(0);
    expect(await kit.usdcBalance(payer.address, USDT)).toBe(1_000_000n);
    expect(await kit.usdcBalance(payer.address)).toBe(1_000_000n);

    const paid = await runCall(
      [shop.url, "echo", "--input", "message=x", "--network", "solana-devnet", "--asset", USDT],
      { env },
    );
    expect(paid.exitCode, paid.stderr).toBe(0);
    expect(paid.stderr).toContain(
      `paid 10000 atomic units of the token ${USDT} (not USDC: allowed with --asset) on ${kit.network}`,
    );
    expect(await kit.usdcBalance(payer.address, USDT)).toBe(1_000_000n - PRICE);
    expect(await kit.usdcBalance(payer.address)).toBe(1_000_000n);
  });

  it("an X402_RPC_URL_<NET> with a user, password and API key is never printed when the payment fails", async () => {
    const shop = await seller([kit.network]);
    const payer = await kit.fundedPayer(1_000_000n);
    const rpc = `${kit.rpcUrl.replace("http://", "http://bob:s0lanaPW@")}/?api-key=solKEY123`;
    const r = await runCall([shop.url, "echo", "--input", "message=x", "--json"], {
      env: market.payerEnv(payer.secretKey, rpc),
    });
    expect(r.exitCode).toBe(1);
    expect(r.stdout + r.stderr).not.toMatch(/bob|s0lanaPW|solKEY123/);
    expect(await kit.usdcBalance(payer.address)).toBe(1_000_000n);
  });

  it("a seller asking 1 USDC on Solana for a job its /about prices at 0.01 is refused; nothing is signed, no USDC moves", async () => {
    const shop = await seller([kit.network], "1");
    const payer = await kit.fundedPayer(2_000_000n);
    const payeeBefore = await kit.usdcBalance(solanaPayee);
    const r = await runCall([shop.url, "echo", "--input", "message=x", "--json"], {
      env: market.payerEnv(payer.secretKey),
    });
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: false,
      error_type: "price",
      error: `${shop.url}/execute asks 1 USDC, more than the 0.01 USDC its /about declares for "echo" (a service asking more than it declares is refused); nothing was signed`,
    });
    await market.expectNothingPaid(shop, payer, 2_000_000n);
    expect(await kit.usdcBalance(solanaPayee)).toBe(payeeBefore);
  });

  it.each([
    ["a JSON number above the price", 1_000_000],
    ["a JSON number equal to the price", 10_000],
    ["exponent notation", "1e6"],
    ["hex", "0xf4240"],
    ["a decimal point", "10000.0"],
    ["leading white space", " 10000"],
    ["a negative number", "-10000"],
    ["a decimal string above the price", "1000000"],
  ])(
    "a Solana offer whose amount is %s: refused before anything is signed, nothing moves",
    async (_form, amount) => {
      const payer = await kit.fundedPayer(1_000_000n);
      const payeeBefore = await kit.usdcBalance(solanaPayee);
      const shop = await sellers.startWith({
        options: [{ network: kit.network, payTo: solanaPayee }],
        facilitators: [facilitator.url],
        solanaAmount: amount,
      });
      const r = await runCall([shop.url, "echo", "--input", "message=x", "--json"], {
        env: market.payerEnv(payer.secretKey),
      });
      expect(r.exitCode, r.stderr).not.toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false });
      expect(r.stdout).toMatch(/nothing was signed/);
      await market.expectNothingPaid(shop, payer);
      expect(await kit.usdcBalance(solanaPayee)).toBe(payeeBefore);
    },
  );

  it("a seller naming the payer as the transaction's fee payer: the guard refuses the signed transaction before it leaves", async () => {
    const payer = await kit.fundedPayer(1_000_000n);
    const shop = await sellers.startWith({
      options: [{ network: kit.network, payTo: solanaPayee }],
      facilitators: [facilitator.url],
      feePayer: payer.address,
    });
    const r = await runCall([shop.url, "echo", "--input", "message=x", "--json"], {
      env: market.payerEnv(payer.secretKey),
    });
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout).error).toBe(
      `refused to pay ${shop.url}/execute: the Solana payment about to be sent makes the payer ${payer.address} its fee payer; it was not sent; nothing was paid`,
    );
    await market.expectNothingPaid(shop, payer);
  });

  it("a malformed SOLANA_PAYER_KEY is refused without showing it", async () => {
    const shop = await seller([kit.network]);
    const key = "3".repeat(60);
    const r = await runCall([shop.url, "echo", "--input", "message=x", "--json"], {
      env: market.payerEnv(key),
    });
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout).error).toContain("SOLANA_PAYER_KEY is not a Solana secret key");
    expect(r.stdout + r.stderr).not.toContain(key);
    expect(shop.requests.filter((q) => q.payment)).toHaveLength(0);
  });
});
