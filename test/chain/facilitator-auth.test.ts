// Facilitator credentials and routing end to end, on anvil with Circle's USDC and the reference x402
// facilitator: a front that demands CDP JWTs (verifying each with the key's public half and its
// method/host/path claim, test/chain/facilitator-proxy.ts) passes every request a server configured
// with CDP_API_KEY_ID/CDP_API_KEY_SECRET sends (startup's /supported, /verify, /settle), for an EC
// and an Ed25519 key, and USDC moves; a wrong key stops the start; a facilitator that refuses
// /settle with 401 leaves the payment unconfirmed (never run again) and no secret or JWT reaches a
// log line or an answer; of two facilitators, the network goes to the one that lists it.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { PrivateKeyAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../templates/runtime/config.js";
import { checkFacilitator } from "../../templates/runtime/payments/facilitator.js";
import { startServer } from "../../templates/runtime/server.js";
import {
  captureLogger,
  job,
  makeAgent,
  post,
  signAuthorization,
  v1Header,
  type TestAgent,
} from "../runtime/helpers.js";
import { PAYEE } from "./accounts.js";
import { asset, domain, facilitatorUrl, firstOffer, rpcUrl, signOffer } from "./context.js";
import {
  ecKey,
  ed25519Key,
  startFacilitatorProxy,
  type FacilitatorProxy,
} from "./facilitator-proxy.js";
import { freshPayer, usdcBalance } from "./usdc.js";

const PRICE = 10_000n;
const KEY_ID = "organizations/test-org/apiKeys/test-key";

const baseEnv = (facilitators: string) => ({
  PORT: "0",
  PAY_TO: PAYEE,
  X402_NETWORK: "base-sepolia",
  X402_ASSET: asset,
  X402_FACILITATOR_URL: facilitators,
});
const cdpEnv = (secret: string) => ({
  CDP_API_KEY_ID: KEY_ID,
  CDP_API_KEY_SECRET: secret,
  X402_FACILITATOR_AUTH: "cdp",
});

let server: Server | undefined;
const proxies: FacilitatorProxy[] = [];
afterEach(async () => {
  if (server?.listening) {
    server.closeAllConnections();
    await new Promise((r) => server!.close(r));
  }
  server = undefined;
});
afterAll(async () => {
  for (const p of proxies) await p.stop();
});
const proxy = async (...args: Parameters<typeof startFacilitatorProxy>) => {
  const p = await startFacilitatorProxy(...args);
  proxies.push(p);
  return p;
};

async function start(agent: TestAgent, env: Record<string, string>) {
  const logger = captureLogger();
  server = await startServer(agent, { env, logger });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, logger };
}

/** A v2 payment for one echo job, as a real client makes it from the 402. */
async function payV2(url: string, payer: PrivateKeyAccount, text: string) {
  const request = job("echo", { text });
  const { header } = await signOffer(payer, await firstOffer(url, request));
  return { request, header };
}

/**
 * A server whose facilitator is `front`, signing with the CDP key `secret`, and one echo job (`text`) a
 * fresh payer pays it for: the server, the payee's USDC before, the request, its payment and the answer.
 */
async function paidThrough(front: FacilitatorProxy, secret: string, text: string) {
  const agent = makeAgent();
  const { url, logger } = await start(agent, { ...baseEnv(front.url), ...cdpEnv(secret) });
  const payer = await freshPayer(rpcUrl, asset, PRICE * 2n);
  const before = await usdcBalance(rpcUrl, asset, PAYEE);
  const { request, header } = await payV2(url, payer, text);
  const res = await post(url, request, { "payment-signature": header });
  return { agent, url, logger, before, request, header, res };
}

describe.each([
  ["EC (ES256)", ecKey],
  ["Ed25519 (EdDSA)", ed25519Key],
])("a facilitator that demands CDP JWTs, %s key", (_name, makeKey) => {
  const key = makeKey();
  let front: FacilitatorProxy;
  beforeAll(async () => {
    front = await proxy(facilitatorUrl, { cdp: { keyId: KEY_ID, publicKey: key.publicKey } });
  });

  it("accepts every request the server sends (startup, verify, settle): the job runs and USDC moves", async () => {
    const { url, logger, before, res } = await paidThrough(front, key.secret, "cdp");
    expect(res.status, res.text).toBe(200);
    expect(await usdcBalance(rpcUrl, asset, PAYEE)).toBe(before + PRICE);
    expect(front.seen.map((s) => [s.method, s.path, s.refused])).toEqual([
      ["GET", "/supported", undefined],
      ["POST", "/verify", undefined],
      ["POST", "/settle", undefined],
    ]);
    const tokens = front.seen.map((s) => s.authorization!.slice("Bearer ".length));
    expect(new Set(tokens).size).toBe(3);
    // GET /health probes the facilitator with its credentials too: healthy, not "unreachable".
    const health = await fetch(`${url}/health`);
    expect(health.status, await health.text()).toBe(200);
    expect(front.seen.slice(3).map((s) => [s.method, s.path, s.refused])).toEqual([
      ["GET", "/supported", undefined],
    ]);
    const logged = JSON.stringify(logger.lines);
    for (const t of tokens) expect(logged).not.toContain(t.split(".")[2]);
    expect(logged).not.toContain(key.secret.slice(40, 80));
  });

  it("a wrong key stops the start, naming the refusal, never the key or the JWT", async () => {
    const wrong = makeKey();
    const config = resolveConfig({ env: { ...baseEnv(front.url), ...cdpEnv(wrong.secret) } });
    const err = await checkFacilitator(config, captureLogger()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as ConfigError).message;
    expect(message).toMatch(
      /could not ask the x402 facilitator .*answered HTTP 401: .*refused the credentials sent: check CDP_API_KEY_ID/,
    );
    const sent = front.seen.at(-1)!;
    expect(sent.refused).toBeDefined();
    expect(message).not.toContain(sent.authorization!.slice(7));
    expect(message).not.toContain(sent.authorization!.split(".")[2]);
    expect(message).not.toContain(wrong.secret.slice(40, 80));
  });
});

it("a facilitator that refuses /settle (401, echoing the JWT): unconfirmed, never run again, no secret anywhere", async () => {
  const key = ecKey();
  const front = await proxy(facilitatorUrl, {
    cdp: { keyId: KEY_ID, publicKey: key.publicKey },
    refuseSettle: true,
  });
  const { agent, url, logger, before, request, header, res } = await paidThrough(
    front,
    key.secret,
    "refused",
  );
  expect(res.status).not.toBe(200);
  expect(res.body.error).toMatch(
    /^payment settlement is unconfirmed, so the result is withheld for now: .*answered HTTP 401: .*This authorization will not be used again/,
  );
  const again = await post(url, request, { "payment-signature": header });
  expect(again.status).not.toBe(200);
  expect(agent.calls.echo).toBe(1); // the handler ran once: this authorization is never run again
  expect(await usdcBalance(rpcUrl, asset, PAYEE)).toBe(before); // and nothing was charged

  const settle = front.seen.find((s) => s.path === "/settle")!;
  const jwt = settle.authorization!.slice("Bearer ".length);
  const everything = [JSON.stringify(logger.lines), res.text, again.text].join("\n");
  for (const secret of [jwt, jwt.split(".")[2]!, key.secret.slice(40, 80)])
    expect(everything).not.toContain(secret);
  expect(JSON.stringify(logger.lines)).toMatch(
    /answered HTTP 401: .*token expired: Bearer \[redacted\]/,
  );
});

it("two facilitators: the network goes to the second when only it lists it; the first gets nothing but /supported", async () => {
  const onChain = new Set(["eip155:84532", "base-sepolia"]);
  const other = await proxy(facilitatorUrl, { kinds: (k) => !onChain.has(k.network) });
  const second = await proxy(facilitatorUrl);
  const agent = makeAgent();
  const { url } = await start(agent, baseEnv(`${other.url},${second.url}`));
  const payer = await freshPayer(rpcUrl, asset, PRICE * 2n);
  const before = await usdcBalance(rpcUrl, asset, PAYEE);

  const { request, header } = await payV2(url, payer, "second");
  expect((await post(url, request, { "payment-signature": header })).status).toBe(200);
  const payload = await signAuthorization(payer, { to: PAYEE, value: "10000", domain });
  const v1 = await post(url, job("echo", { text: "v1" }), { "x-payment": v1Header(payload) });
  expect(v1.status, v1.text).toBe(200);

  expect(await usdcBalance(rpcUrl, asset, PAYEE)).toBe(before + 2n * PRICE);
  expect(other.seen.map((s) => s.path)).toEqual(["/supported"]);
  expect(second.seen.map((s) => s.path)).toEqual([
    "/supported",
    "/verify",
    "/settle",
    "/verify",
    "/settle",
  ]);
});
