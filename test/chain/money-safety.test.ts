// The money-safety regressions of test/runtime/money-safety.test.ts, on a real chain: anvil with
// Circle's USDC, settled directly (this server sends transferWithAuthorization) and through the real
// x402 facilitator. Every case reads the money back from the chain: the payer's and the payee's
// USDC balances and whether the authorization's nonce is used (authorizationState). Each test pays
// with a fresh payer, and each route has its own fresh payee, so balances are independent.
//
// Settlement is made slow on purpose in the "late settlement failure" cases by a pass-through HTTP
// proxy between the server and its settlement route (the RPC node for direct settlement, the
// facilitator otherwise): the chain, the facilitator and the transfer are real, only the wire is slow.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createWalletClient, http, type Hex } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryLedger } from "../../templates/runtime/ledger/memory.js";
import type { AppOptions } from "../../templates/runtime/config.js";
import {
  hostileAgent as baseHostileAgent,
  type HostileAgent as BaseHostileAgent,
  job,
  nowSeconds,
  post,
  unb64,
  type LogLine,
} from "../runtime/helpers.js";
import { DEPLOYER_KEY, SETTLER_KEY } from "./accounts.js";
import {
  asset,
  balance,
  chain,
  client,
  facilitatorUrl,
  freshPayer,
  nonceUsed,
  type RouteApp,
  type RouteName,
  rpcUrl,
  signOffer,
  startRouteApp,
} from "./context.js";
import { mintUsdc, USDC_ABI } from "./usdc.js";

const PRICE = 10_000n; // every capability here costs 0.01 USDC
const SINK = privateKeyToAccount(DEPLOYER_KEY).address; // where a drained payer's USDC goes

/** Moves all of `payer`'s USDC away (a payer spending its money while its job runs). */
async function drain(payer: PrivateKeyAccount): Promise<void> {
  const wallet = createWalletClient({ account: payer, chain, transport: http(rpcUrl) });
  const hash = await wallet.writeContract({
    address: asset,
    abi: USDC_ABI,
    functionName: "transfer",
    args: [SINK, await balance(payer.address)],
  });
  await client.waitForTransactionReceipt({ hash });
}

// ---- a pass-through proxy that can hold requests back (a slow settlement route) ----

interface SlowProxy {
  url: string;
  /** Requests arriving from now on wait until `atMs` (epoch ms) before being forwarded; 0: none wait. */
  holdUntil(atMs: number): void;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function slowProxy(target: string): Promise<SlowProxy> {
  let holdUntil = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const wait = holdUntil - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const answer = await fetch(new URL(req.url ?? "/", target), {
        method: req.method,
        headers: { "content-type": req.headers["content-type"] ?? "application/json" },
        body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
      });
      const text = Buffer.from(await answer.arrayBuffer());
      res
        .writeHead(answer.status, {
          "content-type": answer.headers.get("content-type") ?? "application/json",
        })
        .end(text);
    })().catch((err: unknown) => {
      res.writeHead(502, { "content-type": "text/plain" }).end(`proxy: ${String(err)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    holdUntil: (atMs) => void (holdUntil = atMs),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---- the agent: echo (makeAgent) plus handlers that misbehave the ways the hostile tester found ----

type HostileAgent = BaseHostileAgent & {
  /** The payer the "drain" handler empties, and what it does once done (e.g. slow the settlement). */
  drain?: { payer: PrivateKeyAccount; then: () => void };
};

function hostileAgent(): HostileAgent {
  const agent: HostileAgent = baseHostileAgent();
  agent.add("drain", async () => {
    await drain(agent.drain!.payer);
    agent.drain!.then();
    return { data: {} };
  });
  return agent;
}

// ---- one app per settlement route, each behind its own slow proxy and paying its own payee ----

type Route = RouteApp<HostileAgent> & { proxy: SlowProxy };

/** Bytes of cached results the ledger keeps: 4 results of ~60 KB fit, a 5th evicts the oldest. */
const RESULT_CACHE_BYTES = 256 * 1024;
/** Characters of the cache test's outputs: ~60 KB in the ledger's UTF-16 count, under a quarter of the cache. */
const CACHED_BLOB_CHARS = 30_000;

async function startRoute(name: RouteName): Promise<Route> {
  const proxy = await slowProxy(name === "direct" ? rpcUrl : facilitatorUrl);
  const settlement: AppOptions["payment"] =
    name === "direct"
      ? { rpcUrl: proxy.url, settlerKey: SETTLER_KEY }
      : { facilitatorUrl: proxy.url };
  const route = await startRouteApp(name, hostileAgent(), settlement, {
    maxOutputBytes: 64 * 1024,
    ledger: createMemoryLedger({ maxResultBytes: RESULT_CACHE_BYTES }),
  });
  return { ...route, proxy };
}

const routes = {} as Record<RouteName, Route>;
beforeAll(async () => {
  routes.direct = await startRoute("direct");
  routes.facilitator = await startRoute("facilitator");
});
afterAll(async () => {
  for (const route of Object.values(routes)) {
    await route.app.close();
    await route.proxy.close();
  }
});

/** A real EIP-3009 authorization for `route`'s offer, as the header a v2 client sends. */
async function pay(route: Route, payer: PrivateKeyAccount, validBefore?: number) {
  return await signOffer(payer, route.accepted, {
    to: route.payee,
    ...(validBefore === undefined ? {} : { validBefore: String(validBefore) }),
  });
}

/** A fresh payer holding `usdc`, its authorization of `route`'s offer, and the money before it is used. */
async function paying(route: Route, usdc: bigint) {
  const payer = await freshPayer(usdc);
  const { header, nonce } = await pay(route, payer);
  return { payer, header, nonce, before: await money(route, payer) };
}

/** The payer's and the payee's USDC, read from the chain. */
async function money(route: Route, payer: PrivateKeyAccount) {
  return { payer: await balance(payer.address), payee: await balance(route.payee) };
}

/** Nothing moved on chain since `before`, and the authorization's nonce is still unused. */
async function expectNoCharge(
  route: Route,
  payer: PrivateKeyAccount,
  nonce: Hex,
  before: { payer: bigint; payee: bigint },
) {
  expect(await money(route, payer)).toEqual(before);
  expect(await nonceUsed(payer.address, nonce)).toBe(false);
}

/** Exactly one price moved from payer to payee since `before`, and the nonce is used. */
async function expectChargedOnce(
  route: Route,
  payer: PrivateKeyAccount,
  nonce: Hex,
  before: { payer: bigint; payee: bigint },
) {
  expect(await money(route, payer)).toEqual({
    payer: before.payer - PRICE,
    payee: before.payee + PRICE,
  });
  expect(await nonceUsed(payer.address, nonce)).toBe(true);
}

/** The log lines written since `from` (an index into logger.lines), as one string. */
const logSince = (route: Route, from: number) =>
  route.logger.lines
    .slice(from)
    .map((l: LogLine) => `${l.level} ${l.message} ${JSON.stringify(l.fields)}`)
    .join("\n");

const paymentResponse = (res: Awaited<ReturnType<typeof post>>) =>
  unb64(res.headers.get("payment-response")!);

describe.each<RouteName>(["direct", "facilitator"])("%s settlement", (name) => {
  const route = () => routes[name];

  describe("an output that cannot be delivered is never charged (defect 1)", () => {
    it.each(["circular", "bigint"])(
      "%s inside a free-form object: 500 internal, no USDC moves, the identical retry runs again, the authorization stays good",
      async (text) => {
        const r = route();
        const { payer, header, nonce, before } = await paying(r, 2n * PRICE);
        const logFrom = r.logger.lines.length;
        const body = job("unserializable", { text });
        const runs = r.agent.starts.unserializable ?? 0;

        const res = await post(r.app.url, body, { "payment-signature": header });
        expect(res.status, res.text).toBe(500);
        expect(res.body.error_type).toBe("internal");
        expect(res.body.error).toMatch(/not charged/);
        expect(res.headers.get("payment-response")).toBeNull();
        expect(logSince(r, logFrom)).toMatch(/cannot be serialized/);
        await expectNoCharge(r, payer, nonce, before);

        // Identical retry (same job_id, same authorization): not a cached 500 from a charge; it runs again.
        const retry = await post(r.app.url, body, { "payment-signature": header });
        expect(retry.status, retry.text).toBe(500);
        expect(retry.body.error_type).toBe("internal");
        expect(r.agent.starts.unserializable).toBe(runs + 2);
        await expectNoCharge(r, payer, nonce, before);

        // The authorization was never spent: it pays for a job that works, exactly once.
        const ok = await post(r.app.url, job("echo", { text: "works" }), {
          "payment-signature": header,
        });
        expect(ok.status, ok.text).toBe(200);
        await expectChargedOnce(r, payer, nonce, before);
      },
    );

    it("an output over maxOutputBytes (100 KiB > 64 KiB): 500, no USDC moves; a small one is charged once", async () => {
      const r = route();
      const { payer, header, nonce, before } = await paying(r, 2n * PRICE);
      const logFrom = r.logger.lines.length;

      const res = await post(r.app.url, job("big", { text: String(100 * 1024) }), {
        "payment-signature": header,
      });
      expect(res.status, res.text.slice(0, 300)).toBe(500);
      expect(res.body.error_type).toBe("internal");
      expect(res.text.length).toBeLessThan(1000); // the output is not in the answer
      expect(logSince(r, logFrom)).toMatch(/larger than MAX_OUTPUT_BYTES/);
      await expectNoCharge(r, payer, nonce, before);

      const ok = await post(r.app.url, job("big", { text: "1000" }), {
        "payment-signature": header,
      });
      expect(ok.status, ok.text.slice(0, 300)).toBe(200);
      expect(ok.body.output.data.blob).toHaveLength(1000);
      await expectChargedOnce(r, payer, nonce, before);
    });
  });

  it("a CPU-bound handler (2.5 s busy loop) past its 1 s deadline: 408, no USDC moves (defect 2)", async () => {
    const r = route();
    const { payer, header, nonce, before } = await paying(r, PRICE);
    const started = Date.now();
    const res = await post(
      r.app.url,
      job("busy", { text: "2500" }, { deadline: Date.now() / 1000 + 1 }),
      { "payment-signature": header },
    );
    expect(res.status, res.text).toBe(408);
    expect(res.body.error_type).toBe("deadline");
    expect(Date.now() - started).toBeGreaterThanOrEqual(2400); // it did run its whole loop
    expect(res.headers.get("payment-response")).toBeNull();
    await expectNoCharge(r, payer, nonce, before);
  });

  it("settlement fails late (payer emptied, settlement slow) with the authorization about to expire: 'Nothing was charged' once, no retry offered (defect 5)", async () => {
    const r = route();
    const payer = await freshPayer(PRICE);
    // The gate needs validBefore >= deadline + 15 s. The handler returns well before the deadline;
    // settlement is held back until past it, so by then the authorization has <= 15 s left.
    const t0 = nowSeconds();
    const validBefore = t0 + 18;
    const deadline = t0 + 3; // 2 to 3 s for the handler, even on a loaded machine
    const { header, nonce } = await pay(r, payer, validBefore);
    const payeeBefore = await balance(r.payee);
    const sinkBefore = await balance(SINK);
    r.agent.drain = { payer, then: () => r.proxy.holdUntil(deadline * 1000 + 300) };
    let res: Awaited<ReturnType<typeof post>>;
    try {
      res = await post(r.app.url, job("drain", { text: "the output" }, { deadline }), {
        "payment-signature": header,
      });
    } finally {
      r.proxy.holdUntil(0);
    }
    expect(res.status, res.text).toBe(402);
    expect(res.body.error_type).toBe("payment");
    expect(res.body.error).toMatch(/not settled, so the result is withheld: /);
    expect(res.body.error.match(/nothing was charged/gi), res.body.error).toHaveLength(1);
    // The token refused it (balance): whatever time is left, it is not offered for another run.
    expect(res.body.error).toMatch(
      /(expires too soon to pay for another run|will not be accepted again): sign a new one/,
    );
    expect(res.body.error).not.toMatch(/may be (retried|sent again)/);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(r.agent.starts.drain).toBe(1);
    // On chain: the payee got nothing, the authorization is unused; the payer's USDC went where it sent it.
    expect(await balance(r.payee)).toBe(payeeBefore);
    expect(await nonceUsed(payer.address, nonce)).toBe(false);
    expect(await balance(payer.address)).toBe(0n);
    expect(await balance(SINK)).toBe(sinkBefore + PRICE);

    // The advice was honest: even funded again, this authorization cannot pay for a run any more.
    await mintUsdc(rpcUrl, asset, payer.address, PRICE);
    const again = await post(
      r.app.url,
      job("echo", { text: "again" }, { deadline: nowSeconds() + 1 }),
      {
        "payment-signature": header,
      },
    );
    expect(again.status, again.text).toBe(402);
    expect(again.body.error).toMatch(/expires too early/);
    expect(await nonceUsed(payer.address, nonce)).toBe(false);
    expect(await money(r, payer)).toEqual({ payer: PRICE, payee: payeeBefore });
  });

  it("a handler ignoring its signal keeps the authorization after its 408: 5 resends start no handler; once it stops, one resend is charged once (defect 6)", async () => {
    const r = route();
    const { payer, header, nonce, before } = await paying(r, 2n * PRICE);
    const stubbornBefore = r.agent.starts.stubborn ?? 0;
    const echoBefore = r.agent.calls.echo ?? 0;
    const logFrom = r.logger.lines.length;
    const body = job("stubborn", { text: "4000" }, { deadline: Date.now() / 1000 + 1 });

    const first = await post(r.app.url, body, { "payment-signature": header });
    expect(first.status, first.text).toBe(408);
    expect(r.agent.running()).toBe(1);
    for (let i = 0; i < 5; i++) {
      const again = await post(
        r.app.url,
        { ...body, deadline: nowSeconds() + 30 },
        { "payment-signature": header },
      );
      expect(again.status, again.text).toBe(402);
      expect(again.body.error).toMatch(/in use by a job that is still running/);
    }
    expect(r.agent.starts.stubborn).toBe(stubbornBefore + 1);
    expect(r.agent.running()).toBe(1);
    expect(logSince(r, logFrom)).toMatch(/handler still running after its job was answered/);
    await expectNoCharge(r, payer, nonce, before);

    // The abandoned handler stops; the authorization is free again and pays for one job, once.
    await expect.poll(() => r.agent.running(), { timeout: 10_000, interval: 50 }).toBe(0);
    await expect
      .poll(
        async () =>
          (await post(r.app.url, job("echo", { text: "now" }), { "payment-signature": header }))
            .status,
        { timeout: 10_000, interval: 50 },
      )
      .toBe(200);
    expect(r.agent.calls.echo).toBe(echoBefore + 1);
    expect(r.agent.starts.stubborn).toBe(stubbornBefore + 1);
    await expectChargedOnce(r, payer, nonce, before);

    const spent = await post(r.app.url, job("echo", { text: "twice?" }), {
      "payment-signature": header,
    });
    expect(spent.status).toBe(402);
    expect(spent.body.error).toMatch(/already used/);
    await expectChargedOnce(r, payer, nonce, before);
  });

  describe("bounded echoes and caches (defect 7)", () => {
    it("input nested 2,000 levels deep, with a payment: 400 validation, no USDC moves", async () => {
      const r = route();
      const { payer, header, nonce, before } = await paying(r, PRICE);
      let deep: unknown = "x";
      for (let i = 0; i < 2000; i++) deep = { a: deep };
      const res = await post(r.app.url, job("echo", { text: "x", tags: [deep] }), {
        "payment-signature": header,
      });
      expect(res.status, res.text.slice(0, 300)).toBe(400);
      expect(res.body.error_type).toBe("validation");
      expect(res.body.error).toMatch(/nested more than 64 levels/);
      await expectNoCharge(r, payer, nonce, before);
    });

    it("a 900 KB capability name, with a payment: 400 capability, a small answer, no giant log line, no USDC moves", async () => {
      const r = route();
      const { payer, header, nonce, before } = await paying(r, PRICE);
      const logFrom = r.logger.lines.length;
      const res = await post(r.app.url, job("c".repeat(900_000), { text: "x" }), {
        "payment-signature": header,
      });
      expect(res.status, res.text.slice(0, 300)).toBe(400);
      expect(res.body.error_type).toBe("capability");
      expect(res.text.length).toBeLessThan(2000);
      const lines = r.logger.lines.slice(logFrom);
      expect(lines.length).toBeGreaterThan(0);
      expect(Math.max(...lines.map((l) => JSON.stringify(l).length))).toBeLessThan(10_000);
      await expectNoCharge(r, payer, nonce, before);
    });

    it("the retry cache is bounded in bytes: the oldest identical retry is refused and NOT charged again, the newest is replayed", async () => {
      const r = route();
      const JOBS = 5; // 5 x ~60 KB > 256 KiB: the oldest is evicted
      const payer = await freshPayer(BigInt(JOBS + 2) * PRICE);
      const start = await money(r, payer);
      const paid: Array<{
        body: ReturnType<typeof job>;
        header: string;
        nonce: Hex;
        res: Awaited<ReturnType<typeof post>>;
      }> = [];
      for (let i = 0; i < JOBS; i++) {
        const { header, nonce } = await pay(r, payer);
        const body = job("big", { text: String(CACHED_BLOB_CHARS) });
        const res = await post(r.app.url, body, { "payment-signature": header });
        expect(res.status, res.text.slice(0, 300)).toBe(200);
        expect(await nonceUsed(payer.address, nonce)).toBe(true);
        paid.push({ body, header, nonce, res });
      }
      const afterPaying = await money(r, payer);
      expect(afterPaying).toEqual({
        payer: start.payer - BigInt(JOBS) * PRICE,
        payee: start.payee + BigInt(JOBS) * PRICE,
      });
      const runs = r.agent.starts.big;

      const newest = paid[JOBS - 1]!;
      const replay = await post(r.app.url, newest.body, { "payment-signature": newest.header });
      expect(replay.status).toBe(200);
      expect(replay.text).toBe(newest.res.text);
      expect(paymentResponse(replay).transaction).toBe(paymentResponse(newest.res).transaction);

      const oldest = paid[0]!;
      const refused = await post(r.app.url, oldest.body, { "payment-signature": oldest.header });
      expect(refused.status, refused.text.slice(0, 300)).toBe(402);
      expect(refused.body.error).toMatch(/already used/);

      expect(r.agent.starts.big).toBe(runs); // neither retry ran the handler
      expect(await money(r, payer)).toEqual(afterPaying); // nor moved any USDC
    });
  });
});

describe("settlement fails after the authorization expired (defect 5, both routes at once)", () => {
  it("says 'Nothing was charged' once and to sign a new authorization, never to send the same one again", async () => {
    // validBefore = deadline + 15 s (the least the gate accepts); settlement is held back past it.
    const payers = { direct: await freshPayer(PRICE), facilitator: await freshPayer(PRICE) };
    const t0 = nowSeconds();
    const validBefore = t0 + 18;
    const deadline = t0 + 3; // 2 to 3 s for the handler, even on a loaded machine
    const results = await Promise.all(
      (["direct", "facilitator"] as const).map(async (name) => {
        const r = routes[name];
        const payer = payers[name];
        const { header, nonce } = await pay(r, payer, validBefore);
        const payeeBefore = await balance(r.payee);
        r.agent.drain = { payer, then: () => r.proxy.holdUntil(validBefore * 1000 + 500) };
        try {
          const res = await post(r.app.url, job("drain", { text: "the output" }, { deadline }), {
            "payment-signature": header,
          });
          return { name, r, payer, nonce, payeeBefore, res };
        } finally {
          r.proxy.holdUntil(0);
        }
      }),
    );
    for (const { name, r, payer, nonce, payeeBefore, res } of results) {
      expect(res.status, `${name}: ${res.text}`).toBe(402);
      expect(res.body.error_type).toBe("payment");
      expect(res.body.error, name).toMatch(/not settled, so the result is withheld: /);
      expect(res.body.error.match(/nothing was charged/gi), res.body.error).toHaveLength(1);
      expect(res.body.error, name).toMatch(/This authorization has expired: sign a new one/);
      expect(res.body.error, name).not.toMatch(/may be (retried|sent again)/);
      expect(res.text).not.toContain("the output");
      expect(await balance(r.payee), name).toBe(payeeBefore);
      expect(await nonceUsed(payer.address, nonce), name).toBe(false);
    }
  });
});
