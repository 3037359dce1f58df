// A paid echo job as the official x402 client pays it (v2, eip155:84532): for the tests that need the
// client itself, not our signing helpers, on the other end of a server.
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import type { PrivateKeyAccount } from "viem/accounts";
import { expect } from "vitest";
import { job } from "./helpers.js";

/**
 * POST <url>/execute of the echo job `{text: "paid"}`, paid by the official client with `account`
 * through `fetchImpl`; checks it answered 200 with the echo, and returns the answer.
 */
export async function officialPaidEcho(
  url: string,
  account: PrivateKeyAccount,
  fetchImpl: typeof fetch = fetch,
): Promise<Response> {
  const client = new x402Client().register(
    "eip155:84532",
    new ExactEvmScheme(toClientEvmSigner(account)),
  );
  const res = await wrapFetchWithPayment(fetchImpl, client)(`${url}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(job("echo", { text: "paid" })),
  });
  const text = await res.clone().text();
  expect(res.status, text).toBe(200);
  expect(JSON.parse(text).output).toEqual({ text: "paid" });
  return res;
}
