// An async job paid on Solana is refused: a Solana payment is a transaction whose blockhash dies within
// about a minute, so it cannot wait for a queued job to finish before it is settled. The official
// @x402/fetch + @x402/svm client pays on the Solana kit (LiteSVM behind a loopback JSON-RPC) with
// `Prefer: respond-async`: 402 naming why, nothing run, nothing moved; the same job without the header
// is paid and answered as before.
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { job, nowSeconds } from "../runtime/helpers.js";
import type { SolanaAccount } from "../solana/kit.js";
import { type SolanaServers, startSolanaServers } from "./solana-servers.js";

let servers: SolanaServers;
let payer: SolanaAccount;

beforeAll(async () => {
  servers = await startSolanaServers();
  payer = await servers.kit.fundedPayer(1_000_000n);
}, 120_000);

afterAll(async () => {
  await servers?.close();
});

/** The official client, paying only on Solana. */
function payOnSolana(body: unknown, headers: Record<string, string> = {}) {
  const { kit, direct } = servers;
  const paying = wrapFetchWithPayment(
    fetch,
    new x402Client().register(
      kit.network as `${string}:${string}`,
      new ExactSvmScheme(payer.signer, { rpcUrl: kit.rpcUrl }),
    ),
  );
  return paying(`${direct.running.url}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

describe("async jobs paid on Solana", () => {
  it("are refused (402, naming the blockhash's life): nothing runs, nothing moves", async () => {
    const { kit, direct } = servers;
    const before = await kit.usdcBalance(payer.address);
    const res = await payOnSolana(job("echo", { text: "sol" }, { deadline: nowSeconds() + 25 }), {
      prefer: "respond-async",
    });
    const body = (await res.json()) as { error_type: string; error: string };
    expect(res.status).toBe(402);
    expect(res.headers.get("preference-applied")).toBeNull();
    expect(body.error_type).toBe("payment");
    expect(body.error).toMatch(/EVM networks only: a Solana payment .* blockhash expires/);
    expect(direct.agent.calls.echo).toBeUndefined();
    expect(await kit.usdcBalance(payer.address)).toBe(before);

    // Without the header: the same kind of job is paid on Solana and answered in the request.
    const sync = await payOnSolana(job("echo", { text: "sol" }, { deadline: nowSeconds() + 25 }));
    expect(sync.status).toBe(200);
    expect(await kit.usdcBalance(payer.address)).toBe(before - 10_000n);
  });
});
