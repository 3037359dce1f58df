// A project without the `queue` feature (queue/ deleted, its lines of features.ts dropped): POST
// /execute ignores `Prefer: respond-async` (RFC 7240 lets a server do so) and answers in the
// request, there is no GET /jobs/<id>, no discovery document mentions async jobs, and the queue's
// settings refuse the start, naming the fix.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withDiscovery } from "./discovery-fixture.js";
import { randomUUID } from "node:crypto";
import { X402_EXTENSION_URI } from "../../templates/runtime/a2a/x402.js";
import { rpc03 } from "./a2a-helpers.js";
import { captureLogger, job, listen, makeAgent, PAY_TO, post, PRODUCTION } from "./helpers.js";
import { type RuntimeCopy, runtimeWithout } from "./without-features.js";

let copy: RuntimeCopy;
beforeAll(() => {
  copy = runtimeWithout(["queue"]);
});
afterAll(() => copy?.remove());

type AppModule = typeof import("../../templates/runtime/app.js");
type ConfigModule = typeof import("../../templates/runtime/config.js");

describe("a project without the queue feature", () => {
  it("answers Prefer: respond-async in the request (200, no Preference-Applied), and has no /jobs", async () => {
    const { createApp } = (await copy.load("app.ts")) as AppModule;
    const app = await listen(
      createApp(withDiscovery(makeAgent()), {
        env: { SERVICE_DEV_MODE: "true" },
        logger: captureLogger(),
      }),
    );
    try {
      const answer = await post(app.url, job("echo", { text: "hi" }), { prefer: "respond-async" });
      expect(answer.status).toBe(200);
      expect(answer.headers.get("preference-applied")).toBeNull();
      expect(answer.body.output).toEqual({ text: "hi" });
      const poll = await fetch(`${app.url}/jobs/job_00000000000000000000000000000000`);
      expect(poll.status).toBe(404);
      // The agent card and /llms.txt say nothing of async jobs.
      // (The 1.0 card: the 0.3 one lists only A2A transports, /execute not among them.)
      const v1 = { headers: { "A2A-Version": "1.0" } };
      for (const path of ["/.well-known/agent-card.json", "/llms.txt"]) {
        const doc = await fetch(`${app.url}${path}`, v1);
        expect(doc.status).toBe(200);
        const text = await doc.text();
        expect(text).toContain("/execute");
        expect(text).not.toMatch(/respond-async|\/jobs/);
      }
      const card = JSON.parse(await (await fetch(`${app.url}/.well-known/agent-card.json`)).text());
      expect(card.capabilities.extensions).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it("refuses the queue's settings, naming the command that adds it", async () => {
    const { ConfigError, resolveConfig } = (await copy.load("config.ts")) as ConfigModule;
    try {
      resolveConfig({
        env: {
          PAY_TO,
          X402_NETWORK: "base-sepolia",
          X402_FACILITATOR_URL: "https://x402.org/facilitator",
          WORKER: "off",
        },
      });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as InstanceType<typeof ConfigError>).problems).toEqual([
        "WORKER is set (async jobs), which this project does not include: run npm run add -- queue",
      ]);
    }
  });

  it("refuses an A2A paying turn sent with return_immediately, naming the command; nothing run", async () => {
    const { createApp } = (await copy.load("app.ts")) as AppModule;
    const agent = withDiscovery(makeAgent());
    const app = await listen(createApp(agent, { ...PRODUCTION, logger: captureLogger() }));
    try {
      const message = {
        kind: "message",
        messageId: randomUUID(),
        role: "user",
        taskId: randomUUID(),
        parts: [{ kind: "text", text: "paying" }],
        metadata: { "x402.payment.status": "payment-submitted", "x402.payment.payload": {} },
      };
      const { body } = await rpc03(
        app.url,
        "message/send",
        { message, configuration: { blocking: false } },
        { "A2A-Extensions": X402_EXTENSION_URI },
      );
      expect(body.error.message).toMatch(/no job queue for long jobs: npm run add -- queue/);
      expect(body.error.message).toMatch(/nothing was run or charged/);
      expect(agent.calls).toEqual({});
    } finally {
      await app.close();
    }
  });
});
