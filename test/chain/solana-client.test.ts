// A client written by `create-agent client`, compiled in a fresh strict project and run with node, paying on
// Solana (issue 17): the official @x402/svm client imported on demand, a real Solana runtime (the kit's
// LiteSVM behind its JSON-RPC) and the reference facilitator with the SVM scheme, against a seller made of
// real x402 parts (test/solana/seller.ts) offering Solana devnet beside Base Sepolia on anvil.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildCli, payingProject, type TsProject } from "../cli/client-project.js";
import type { SolanaKit } from "../solana/kit.js";
import type { Seller } from "../solana/seller.js";
import { BASE_SEPOLIA, PRICE, type SolanaSellers, startSolanaSellers } from "./solana-sellers.js";
import { BASE_SEPOLIA_USDC, usdcBalance } from "./usdc.js";

const { rpcUrl } = inject("chain");

// argv: baseUrl network deadlineSeconds async; keys and RPC from the environment (the defaults).
const SCRIPT = `import { AgentCallError, createAgentClient } from "./solana-client.js";

const [baseUrl = "", network = "", deadlineSeconds = "", mode = ""] = process.argv.slice(2);
try {
  const agent = createAgentClient({
    baseUrl,
    maxPrice: "0.05",
    ...(network ? { network } : {}),
    ...(deadlineSeconds ? { deadlineSeconds: Number(deadlineSeconds) } : {}),
  });
  const result = await agent.echo(
    { message: "on solana" },
    { jobId: \`job-\${Date.now()}\`, ...(mode === "async" ? { async: true } : {}) },
  );
  console.log(JSON.stringify({ ok: true, output: result.output, payment: result.payment ?? null }));
} catch (error) {
  if (error instanceof AgentCallError)
    console.log(JSON.stringify({ ok: false, errorType: error.errorType, message: error.message }));
  else if (error instanceof TypeError) console.log(JSON.stringify({ ok: false, errorType: "options", message: error.message }));
  else throw error;
}
`;

let market: SolanaSellers;
let kit: SolanaKit;
let solanaPayee: string;
let project: TsProject;
let removeTemp: () => Promise<void>;
const seller = (networks: string[], askedUsd?: string): Promise<Seller> =>
  market.seller(networks, askedUsd);

async function run(args: string[], env: Record<string, string>) {
  const r = await project.run("pay.js", args, env);
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

beforeAll(async () => {
  await buildCli();
  market = await startSolanaSellers();
  ({ kit, solanaPayee } = market);
  const template = await seller([kit.network]);
  ({ project, remove: removeTemp } = await payingProject(
    "client-solana",
    template.url,
    "solana-client.ts",
    SCRIPT,
  ));
}, 180_000);

afterAll(async () => {
  await market?.close();
  await removeTemp?.();
});

describe("a generated client paying on Solana", () => {
  it("pays 0.01 USDC with SOLANA_PAYER_KEY: the payee gains the price; result.payment is what was transferred; the default deadline fits Solana", async () => {
    const shop = await seller([kit.network]);
    const payer = await kit.fundedPayer(1_000_000n);
    const payeeBefore = await kit.usdcBalance(solanaPayee);
    const printed = await run([shop.url], market.payerEnv(payer.secretKey));
    expect(printed, JSON.stringify(printed)).toMatchObject({
      ok: true,
      output: { text: "on solana" },
    });
    expect(printed.payment).toEqual({
      transaction: shop.settled[0]!.transaction,
      network: kit.network,
      payer: payer.address,
      amount: "0.01",
    });
    expect(await kit.usdcBalance(solanaPayee)).toBe(payeeBefore + PRICE);
    expect(await kit.usdcBalance(payer.address)).toBe(1_000_000n - PRICE);
    expect(shop.requests.every((q) => q.deadlineIn <= 30)).toBe(true);
  });

  it("network chooses among the offered networks; by default the first one a key is held for", async () => {
    const shop = await seller([BASE_SEPOLIA, kit.network]);
    const payer = await kit.fundedPayer(1_000_000n);
    const { key: evmKey, address: evmAddress } = await market.evmPayer();
    const env = { ...market.payerEnv(payer.keygenJson), X402_PAYER_KEY: evmKey };

    const onSolana = await run([shop.url, "solana-devnet"], env);
    expect(onSolana.payment).toMatchObject({ network: kit.network, payer: payer.address });
    expect(await kit.usdcBalance(payer.address)).toBe(1_000_000n - PRICE);
    expect(await usdcBalance(rpcUrl, BASE_SEPOLIA_USDC, evmAddress)).toBe(1_000_000n);

    const byDefault = await run([shop.url], env);
    expect(byDefault.payment).toMatchObject({ network: BASE_SEPOLIA, payer: evmAddress });
    expect(await usdcBalance(rpcUrl, BASE_SEPOLIA_USDC, evmAddress)).toBe(1_000_000n - PRICE);
    expect(await kit.usdcBalance(payer.address)).toBe(1_000_000n - PRICE);

    const only = await seller([kit.network]);
    const absent = await run([only.url, "base-sepolia"], env);
    expect(absent).toMatchObject({ ok: false, errorType: "payment" });
    expect(absent.message).toContain(
      `the service does not offer payment on network "base-sepolia"; it offers: ${kit.network}; nothing was signed`,
    );
    expect(only.requests.filter((q) => q.payment)).toHaveLength(0);
  });

  it("a deadline a Solana payment cannot cover is refused before anything is signed", async () => {
    const { shop, payer, env } = await market.solanaShop();
    const option = await run([shop.url, "solana-devnet", "120"], env);
    expect(option).toMatchObject({ ok: false, errorType: "options" });
    expect(option.message).toContain(
      "deadlineSeconds 120 is longer than a Solana payment can cover: a job paid on Solana must be due within 30 s",
    );
    expect(shop.requests).toHaveLength(0);

    const implicit = await run([shop.url, "", "120"], env);
    expect(implicit).toMatchObject({ ok: false, errorType: "payment" });
    expect(implicit.message).toContain("this client holds a key only for Solana");
    expect(implicit.message).toContain("nothing was signed");
    await market.expectNothingPaid(shop, payer);
  });

  it("async: true on Solana is refused before anything is signed (the payment cannot wait for a queued job)", async () => {
    const { shop, payer, env } = await market.solanaShop();
    const printed = await run([shop.url, "", "", "async"], env);
    expect(printed).toMatchObject({ ok: false, errorType: "payment" });
    expect(printed.message).toContain(
      `a payment on ${kit.network} cannot wait for one (a Solana transaction's blockhash expires`,
    );
    expect(printed.message).toContain("nothing was signed");
    await market.expectNothingPaid(shop, payer);
  });

  it("a seller asking 1 USDC on Solana for a job declared at 0.01 is refused; nothing is signed, no USDC moves", async () => {
    const shop = await seller([kit.network], "1");
    const payer = await kit.fundedPayer(2_000_000n);
    const payeeBefore = await kit.usdcBalance(solanaPayee);
    const printed = await run([shop.url], market.payerEnv(payer.secretKey));
    expect(printed).toMatchObject({ ok: false, errorType: "price" });
    expect(printed.message).toContain(
      "refused to pay: the service asks 1 USDC, more than 0.01 USDC (the price solana-seller declared",
    );
    expect(printed.message).toContain("nothing was signed");
    await market.expectNothingPaid(shop, payer, 2_000_000n);
    expect(await kit.usdcBalance(solanaPayee)).toBe(payeeBefore);
  });
});
