// Exercises every endpoint and every capability over real HTTP, in dev mode and in production mode.
// It reads the capabilities from the generated registry, so it keeps covering them as agent.json changes.
// Add your own tests beside it (for example test/<capability>.test.ts for your handler's logic).
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agent } from "../src/generated/registry.js";
import { sampleInputs } from "../src/generated/samples.js";
import { createApp, type AppOptions } from "../src/runtime/app.js";
import type { Logger } from "../src/runtime/types.js";

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const capabilities = Object.keys(agent.capabilities);
// A throwaway payee: production mode needs one to build the 402 payment requirements.
const payTo = "0x000000000000000000000000000000000000dEaD";

async function serve(options: AppOptions) {
  const server = createApp(agent, { logger: silent, env: {}, ...options }).listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((done) => server.close(done)),
  };
}

function job(capability: string, input: unknown, secondsLeft = 30) {
  return {
    service_version: "1.0",
    job_id: `test-${capability}`,
    task: { capability, input },
    deadline: Date.now() / 1000 + secondsLeft,
  };
}

/** A response body as JSON (fetch types it `unknown`; these tests assert on its shape). */
const json = (res: Response): Promise<any> => res.json();

function execute(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${url}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

describe("dev mode (payment gate bypassed)", () => {
  let server: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    server = await serve({ devMode: true });
  });
  afterAll(() => server.close());

  it("GET /health reports the agent", async () => {
    const res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ name: agent.name, version: agent.version, status: "ok" });
  });

  it("GET /about declares every capability", async () => {
    const res = await fetch(`${server.url}/about`);
    expect(res.status).toBe(200);
    const about = await json(res);
    expect(about.service_version).toBe("1.0");
    expect(about.name).toBe(agent.name);
    expect(Object.keys(about.capabilities)).toEqual(capabilities);
  });

  describe.each(capabilities)("capability %s", (name) => {
    const capability = agent.capabilities[name]!;

    it("runs a job and returns an output that matches the output_schema", async () => {
      const res = await execute(server.url, job(name, sampleInputs[name]));
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({
        service_version: "1.0",
        job_id: `test-${name}`,
        status: "completed",
      });
      expect(typeof body.completed_at).toBe("number");
      expect(
        capability.validateOutput(body.output),
        JSON.stringify(capability.validateOutput.errors),
      ).toBe(true);
    });

    it("refuses an input that is not an object with a validation error", async () => {
      const res = await execute(server.url, job(name, "not an object"));
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({ status: "failed", error_type: "validation" });
    });

    it("refuses a job whose deadline has passed with a deadline error", async () => {
      const res = await execute(server.url, job(name, sampleInputs[name], -1));
      expect(res.status).toBe(408);
      expect(await json(res)).toMatchObject({ status: "failed", error_type: "deadline" });
    });
  });

  it("names the unknown capability and lists the available ones", async () => {
    const res = await execute(server.url, job("no-such-capability", {}));
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body).toMatchObject({ status: "failed", error_type: "capability" });
    expect(body.error).toContain("no-such-capability");
    for (const name of capabilities) expect(body.error).toContain(name);
  });

  it("answers malformed JSON with a validation error", async () => {
    const res = await execute(server.url, "{ not json");
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ status: "failed", error_type: "validation" });
  });

  it("answers unknown routes with a JSON 404", async () => {
    const res = await fetch(`${server.url}/nope`);
    expect(res.status).toBe(404);
    expect(await json(res)).toMatchObject({ status: "failed" });
  });
});

describe("production mode (x402 payment gate on)", () => {
  let server: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    // Production needs a settlement route; these tests stop at the 402s, so it is never contacted.
    server = await serve({
      devMode: false,
      payment: { payTo, network: "base-sepolia", facilitatorUrl: "http://127.0.0.1:9" },
    });
  });
  afterAll(() => server.close());

  it.each(capabilities)(
    "%s: a job without PAYMENT-SIGNATURE gets 402 with its price",
    async (name) => {
      const res = await execute(server.url, job(name, sampleInputs[name]));
      expect(res.status).toBe(402);
      const body = await json(res);
      expect(body.x402Version).toBe(1);
      expect(body.accepts[0]).toMatchObject({
        scheme: "exact",
        maxAmountRequired: agent.capabilities[name]!.priceAtomic,
        payTo,
      });
    },
  );

  it("refuses a PAYMENT-SIGNATURE that is not a payment with a payment error", async () => {
    const name = capabilities[0]!;
    const res = await execute(server.url, job(name, sampleInputs[name]), {
      "payment-signature": "bm90IGEgcGF5bWVudA==",
    });
    expect(res.status).toBe(402);
    expect(await json(res)).toMatchObject({ status: "failed", error_type: "payment" });
  });
});
