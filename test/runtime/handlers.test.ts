// Lazily imported handlers: a capability's module loads on its first job in dev mode, before the
// server listens in production, once either way. And the ctx a handler gets from startHandler.
import { describe, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import { DeadlineError } from "../../templates/runtime/errors.js";
import { lazyHandler, loadHandlers } from "../../templates/runtime/handlers.js";
import { startHandler } from "../../templates/runtime/jobs/handler.js";
import { noMetrics } from "../../templates/runtime/ops/metrics.js";
import { startServer } from "../../templates/runtime/server.js";
import type { Capability, Handler, HandlerContext } from "../../templates/runtime/types.js";
import { captureLogger, job, listen, makeAgent, post, production } from "./helpers.js";

/** A lazy echo handler counting how often its "module" was imported. */
function counted(fail?: Error) {
  const counter = { imports: 0 };
  const handler = lazyHandler(async () => {
    counter.imports++;
    if (fail) throw fail;
    const echo: Handler<{ text: string }, { text: string }> = async (input) => ({
      text: input.text,
    });
    return { default: echo };
  });
  return { counter, handler };
}

describe("lazyHandler", () => {
  it("imports its module on the first call, once, and passes input and context through", async () => {
    const { counter, handler } = counted();
    expect(counter.imports).toBe(0);
    const ctx = {} as Parameters<typeof handler>[1];
    const [a, b] = await Promise.all([handler({ text: "a" }, ctx), handler({ text: "b" }, ctx)]);
    expect([a, b]).toEqual([{ text: "a" }, { text: "b" }]);
    await handler({ text: "c" }, ctx);
    expect(counter.imports).toBe(1);
  });

  it("refuses a module without a default export function", async () => {
    const handler = lazyHandler(async () => ({ default: undefined as never }));
    await expect(handler.load()).rejects.toThrow(/no default export/);
  });

  it("loadHandlers imports every lazy module and reports a failure", async () => {
    const agent = makeAgent();
    const first = counted();
    const second = counted();
    agent.capabilities.echo!.handler = first.handler;
    agent.capabilities.cheap!.handler = second.handler; // the others are plain handlers
    await loadHandlers(agent.capabilities);
    expect([first.counter.imports, second.counter.imports]).toEqual([1, 1]);
    agent.capabilities.slow!.handler = counted(new Error("broken module")).handler;
    await expect(loadHandlers(agent.capabilities)).rejects.toThrow("broken module");
  });

  it("dev mode: a module that cannot load fails its own jobs (500), not the others or the start", async () => {
    const agent = makeAgent();
    const broken = counted(new Error("SyntaxError in summarize.ts"));
    agent.capabilities.echo!.handler = broken.handler;
    const logger = captureLogger();
    const app = await listen(createApp(agent, { env: {}, logger, devMode: true }));
    try {
      expect(broken.counter.imports).toBe(0);
      expect((await post(app.url, job("cheap", { text: "hi" }))).status).toBe(200);
      const res = await post(app.url, job("echo", { text: "hi" }));
      expect(res.status).toBe(500);
      expect(logger.lines.some((l) => String(l.fields.error).includes("SyntaxError"))).toBe(true);
    } finally {
      await app.close();
    }
  });

  it("production: startServer imports every module before it listens, and does not start without them", async () => {
    const agent = makeAgent();
    const lazy = counted();
    agent.capabilities.echo!.handler = lazy.handler;
    const options = { env: { PORT: "0" }, logger: captureLogger(), ...production() };
    const server = await startServer(agent, options);
    try {
      expect(lazy.counter.imports).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    agent.capabilities.echo!.handler = counted(new Error("cannot load")).handler;
    await expect(startServer(agent, options)).rejects.toThrow("cannot load");
  });
});

describe("startHandler's ctx", () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const jobDue = (ms: number) => ({
    jobId: "j",
    capability: "c",
    input: {},
    deadline: (Date.now() + ms) / 1000,
  });
  const run = (handler: Capability["handler"], dueInMs: number) => {
    const capability = { ...makeAgent().capabilities.echo!, handler };
    return startHandler(
      jobDue(dueInMs),
      capability,
      {},
      {
        logger: captureLogger(),
        metrics: noMetrics,
      },
    );
  };

  it("ctx.signal read after the deadline is already aborted with the job's DeadlineError", async () => {
    let ctx!: HandlerContext;
    const started = run(async (_input, c) => {
      ctx = c;
      await sleep(150);
      return { text: "late" };
    }, 30);
    const err = await started.result.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeadlineError);
    expect(ctx.signal.aborted).toBe(true);
    expect(ctx.signal.reason).toBe(err);
    expect(ctx.signal).toBe(ctx.signal); // one signal
    await started.stopped;
    expect(started.isRunning()).toBe(false);
  });

  it("ctx.signal read before the deadline aborts at it; ctx carries the job's fields", async () => {
    let ctx!: HandlerContext;
    const started = run(
      (_input, c) =>
        new Promise((_, reject) => {
          ctx = c;
          c.signal.addEventListener("abort", () => reject(c.signal.reason));
        }),
      30,
    );
    await expect(started.result).rejects.toBeInstanceOf(DeadlineError);
    expect(ctx).toMatchObject({ jobId: "j", capability: "echo", logger: expect.anything() });
    expect(ctx.payment).toBeUndefined();
  });

  it("a handler returning in time gets its result through, and its timer is gone", async () => {
    const started = run(async () => ({ text: "ok" }), 60_000);
    await expect(started.result).resolves.toEqual({ text: "ok" });
    await started.stopped;
  });
});
