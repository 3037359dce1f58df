// An async job paid on Solana is refused: a Solana payment is a transaction whose blockhash dies within
// about a minute, so it cannot wait for a queued job to finish before it is settled. The official
// @x402/fetch + @x402/svm client pays on the Solana kit (LiteSVM behind a loopback JSON-RPC) with
// `Prefer: respond-async`: 402 naming why, nothing run, nothing moved; the same job without the header
// is paid and answered as before. Over A2A the same: a paying turn sent with return_immediately is not
// queued (the task stays input-required, saying why), and the same payment sent waiting runs the job.
import { randomUUID } from "node:crypto";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { X402_EXTENSION_URI } from "../../templates/runtime/a2a/x402.js";
import { rpc03 } from "../runtime/a2a-helpers.js";
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

describe("A2A tasks paid on Solana", () => {
  it("return_immediately is not queued: input-required naming why, nothing run or moved; the same payment sent waiting completes, charged once", async () => {
    const { kit, direct } = servers;
    const url = direct.running.url;
    const headers = { "A2A-Extensions": X402_EXTENSION_URI };
    const message = (more: Record<string, unknown>) => ({
      kind: "message",
      messageId: randomUUID(),
      role: "user",
      ...more,
    });
    const first = await rpc03(
      url,
      "message/send",
      {
        message: message({
          parts: [{ kind: "data", data: { capability: "echo", input: { text: "a2a" } } }],
          metadata: { deadline: nowSeconds() + 25 },
        }),
      },
      headers,
    );
    const task = first.body.result;
    expect(task.status.state).toBe("input-required");
    const client = new x402Client().register(
      kit.network as `${string}:${string}`,
      new ExactSvmScheme(payer.signer, { rpcUrl: kit.rpcUrl }),
    );
    const payload = await client.createPaymentPayload(
      task.status.message.metadata["x402.payment.required"],
    );
    const before = await kit.usdcBalance(payer.address);
    const calls = direct.agent.calls.echo ?? 0;
    const paying = (configuration?: Record<string, unknown>) =>
      rpc03(
        url,
        "message/send",
        {
          message: message({
            taskId: task.id,
            contextId: task.contextId,
            parts: [{ kind: "text", text: "paying" }],
            metadata: {
              "x402.payment.status": "payment-submitted",
              "x402.payment.payload": payload,
            },
          }),
          ...(configuration && { configuration }),
        },
        headers,
      );
    const queued = (await paying({ blocking: false })).body.result;
    expect(queued.status.state).toBe("input-required");
    expect(JSON.stringify(queued.status.message.parts)).toMatch(/blockhash/);
    expect(direct.agent.calls.echo ?? 0).toBe(calls);
    expect(await kit.usdcBalance(payer.address)).toBe(before);

    const done = (await paying()).body.result;
    expect(done.status.state).toBe("completed");
    expect(done.artifacts[0].parts[0].data).toEqual({ text: "a2a" });
    expect(await kit.usdcBalance(payer.address)).toBe(before - 10_000n);
  });
});
