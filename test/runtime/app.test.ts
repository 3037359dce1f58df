// The HTTP app end to end (real Express on port 0, real fetch, real timers), in dev mode unless a
// test says otherwise. Payment tests live in payment.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GENERIC_INTERNAL_MESSAGE } from "../../templates/runtime/errors.js";
import {
  PRODUCTION,
  job,
  logText,
  makeAgent,
  nowSeconds,
  post,
  startApp,
  type TestAgent,
  withApp,
} from "./helpers.js";

let agent: TestAgent;
let app: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  agent = makeAgent();
  app = await startApp(agent, { devMode: true, maxBodyBytes: 2048 });
});
afterAll(() => app.close());

const failed = (error_type: string) => ({
  status: "failed",
  error_type,
  error: expect.any(String),
});

describe("GET endpoints", () => {
  it("GET /health answers name, version, ok", async () => {
    const res = await fetch(`${app.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name: "test-agent", version: "1.2.3", status: "ok" });
    expect(res.headers.get("x-powered-by")).toBeNull();
  });

  it("GET /about declares every capability verbatim", async () => {
    const res = await fetch(`${app.url}/about`);
    const body: any = await res.json();
    expect(res.status).toBe(200);
    expect(body.service_version).toBe("1.0");
    expect(body.name).toBe("test-agent");
    expect(Object.keys(body.capabilities)).toEqual([
      "echo",
      "cheap",
      "slow",
      "bad_output",
      "throws",
    ]);
    expect(body.capabilities.echo).toEqual(agent.capabilities.echo!.declaration);
  });

  it("health and about are free in production", async () => {
    await withApp(PRODUCTION, async (prod) => {
      expect((await fetch(`${prod.url}/health`)).status).toBe(200);
      expect((await fetch(`${prod.url}/about`)).status).toBe(200);
    });
  });
});

describe("dev mode", () => {
  it("logs a startup warning that payment verification is bypassed", () => {
    const warning = app.logger.lines.find((l) => l.level === "warn");
    expect(warning?.message).toMatch(/payment verification is bypassed/);
  });

  it("runs a job with no payment header and returns the job result", async () => {
    const before = agent.calls.echo ?? 0;
    const request = job("echo", { text: "ab", times: 2 });
    const res = await post(app.url, request);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      service_version: "1.0",
      job_id: request.job_id,
      status: "completed",
      output: { text: "abab" },
      completed_at: expect.any(Number),
    });
    expect(Number.isInteger(res.body.completed_at)).toBe(true);
    expect(Math.abs(res.body.completed_at - nowSeconds())).toBeLessThan(5);
    expect(agent.calls.echo).toBe(before + 1);
    expect(agent.seen.echo!.ctx.payment).toBeUndefined();
  });

  it("ignores a garbage payment header entirely", async () => {
    const res = await post(app.url, job("echo", { text: "x" }), {
      "payment-signature": "%%%not base64",
      "x-payment": "{}",
    });
    expect(res.status).toBe(200);
  });

  it("logs one info line per job with job_id, capability, status and ms", async () => {
    const request = job("echo", { text: "log me" });
    await post(app.url, request);
    const line = app.logger.lines.find(
      (l) => l.level === "info" && l.fields.job_id === request.job_id,
    );
    expect(line?.fields).toMatchObject({ capability: "echo", status: 200, ms: expect.any(Number) });
  });

  it("passes a mismatching output through with a warning", async () => {
    const request = job("bad_output", { text: "x" });
    const res = await post(app.url, request);
    expect(res.status).toBe(200);
    expect(res.body.output).toEqual({ text: "x", secret: "extra" });
    const warn = app.logger.lines.find(
      (l) => l.level === "warn" && l.fields.job_id === request.job_id,
    );
    expect(warn?.message).toMatch(/output does not match/);
    expect(String(warn?.fields.problem)).toContain('output: unknown field "secret"');
  });
  // The production side (500 internal for the same mismatch) needs a paid request: payment.test.ts.
});

describe("input validation (step 2)", () => {
  it('coerces "5" to 5 for an integer and applies defaults', async () => {
    const res = await post(app.url, job("echo", { text: "a", times: "3" }));
    expect(res.status).toBe(200);
    expect(res.body.output).toEqual({ text: "aaa" });
    expect(agent.seen.echo!.input).toEqual({ text: "a", times: 3, mode: "fast" });
  });

  it.each([
    [{}, 'input: missing required field "text"'],
    [{ text: "a", times: "many" }, "input.times: must be integer"],
    [{ text: "a", foo: 1 }, 'input: unknown field "foo"'],
    [{ text: "a", tags: ["x", "y", {}] }, "input.tags[2]: must be string"],
    [{ text: "a", mode: "medium" }, 'input.mode: must be one of "fast", "slow"'],
    [{ text: "a", times: 9 }, "input.times: must be <= 5"],
    [{ text: "a", email: "nope" }, 'input.email: must match format "email"'],
    [{ text: "a", code: "abc" }, "input.code: must match pattern"],
    [{ text: "" }, "input.text: must NOT have fewer than 1 characters"],
  ])("%j -> 400 naming the field: %s", async (input, message) => {
    const before = agent.calls.echo ?? 0;
    const res = await post(app.url, job("echo", input));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(failed("validation"));
    expect(res.body.error).toContain(message);
    expect(agent.calls.echo ?? 0).toBe(before);
  });

  it("reports every problem at once", async () => {
    const res = await post(app.url, job("echo", { times: "x", foo: 1 }));
    expect(res.body.error).toContain('input: missing required field "text"');
    expect(res.body.error).toContain("input.times: must be integer");
    expect(res.body.error).toContain('input: unknown field "foo"');
  });
});

describe("capability lookup (step 1)", () => {
  it("unknown capability -> 400 capability naming it and listing the available ones", async () => {
    const res = await post(app.url, job("translate", { text: "x" }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(failed("capability"));
    expect(res.body.error).toContain('"translate"');
    expect(res.body.error).toContain('"echo", "cheap", "slow", "bad_output", "throws"');
  });

  it.each(["constructor", "__proto__", "toString", "hasOwnProperty"])(
    "%s is an unknown capability",
    async (name) => {
      const res = await post(app.url, job(name, { text: "x" }));
      expect(res.status).toBe(400);
      expect(res.body.error_type).toBe("capability");
      expect(res.body.error).toContain(JSON.stringify(name));
    },
  );
});

describe("request shape (step 0)", () => {
  const valid = () => job("echo", { text: "x" });
  it.each<[string, (b: any) => unknown, string]>([
    [
      "missing service_version",
      (b) => ({ ...b, service_version: undefined }),
      'service_version: missing required field; this service supports "1.0"',
    ],
    [
      "wrong service_version",
      (b) => ({ ...b, service_version: "2.0" }),
      'service_version: unsupported version "2.0"; this service supports "1.0"',
    ],
    [
      "numeric service_version",
      (b) => ({ ...b, service_version: 1 }),
      "service_version: unsupported version 1",
    ],
    ["missing job_id", (b) => ({ ...b, job_id: undefined }), "job_id: missing required field"],
    ["empty job_id", (b) => ({ ...b, job_id: "" }), "job_id: must be a non-empty string"],
    ["numeric job_id", (b) => ({ ...b, job_id: 7 }), "job_id: must be a non-empty string"],
    ["long job_id", (b) => ({ ...b, job_id: "j".repeat(257) }), "at most 256 characters"],
    ["missing task", (b) => ({ ...b, task: undefined }), "task: missing required field"],
    ["task array", (b) => ({ ...b, task: [] }), "task: must be an object"],
    [
      "missing capability",
      (b) => ({ ...b, task: { input: {} } }),
      "task.capability: missing required field",
    ],
    [
      "numeric capability",
      (b) => ({ ...b, task: { capability: 1, input: {} } }),
      "task.capability: must be a string",
    ],
    [
      "missing input",
      (b) => ({ ...b, task: { capability: "echo" } }),
      "task.input: missing required field",
    ],
    [
      "string input",
      (b) => ({ ...b, task: { capability: "echo", input: "hi" } }),
      "task.input: must be an object",
    ],
    [
      "missing deadline",
      (b) => ({ ...b, deadline: undefined }),
      "deadline: missing required field",
    ],
    ["string deadline", (b) => ({ ...b, deadline: "soon" }), "deadline: must be a positive number"],
    ["negative deadline", (b) => ({ ...b, deadline: -1 }), "deadline: must be a positive number"],
  ])("%s -> 400 validation", async (_name, change, message) => {
    const res = await post(app.url, change(valid()));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(failed("validation"));
    expect(res.body.error).toContain(message);
  });

  // The OpenAPI document says JobId has maxLength 256: JSON Schema counts characters (code points),
  // so an emoji counts one although JavaScript strings hold it as two UTF-16 units.
  it.each([129, 200, 256])("a job_id of %i emoji is accepted and echoed", async (count) => {
    const jobId = "😀".repeat(count);
    const res = await post(app.url, { ...valid(), job_id: jobId });
    expect(res.status).toBe(200);
    expect(res.body.job_id).toBe(jobId);
  });

  it("a job_id of 257 emoji -> 400 validation, the same message as 257 letters", async () => {
    const res = await post(app.url, { ...valid(), job_id: "😀".repeat(257) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(failed("validation"));
    expect(res.body.error).toBe("job_id: must be a non-empty string of at most 256 characters");
  });

  it.each([["[]"], ["42"], ["null"], ['"text"']])(
    "body %s -> 400 must be a JSON object",
    async (body) => {
      const res = await post(app.url, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toContain("request body must be a JSON object");
    },
  );

  it("lists several problems at once", async () => {
    const res = await post(app.url, { service_version: "1.0" });
    expect(res.body.error).toContain("job_id");
    expect(res.body.error).toContain("task");
    expect(res.body.error).toContain("deadline");
  });
});

describe("transport errors", () => {
  it("wrong Content-Type -> 415 validation", async () => {
    const res = await fetch(`${app.url}/execute`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "{}",
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual(failed("validation"));
  });

  it("missing Content-Type -> 415", async () => {
    const res = await fetch(`${app.url}/execute`, {
      method: "POST",
      body: new Uint8Array([123, 125]),
    });
    expect(res.status).toBe(415);
  });

  it("JSON Content-Type with an empty body -> 400 listing the missing fields", async () => {
    const res = await fetch(`${app.url}/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error).toContain("service_version: missing required field");
  });

  it("application/json; charset=utf-8 is accepted", async () => {
    const res = await post(app.url, job("echo", { text: "x" }), {
      "content-type": "application/json; charset=utf-8",
    });
    expect(res.status).toBe(200);
  });

  it("malformed JSON -> 400 validation saying where", async () => {
    const res = await post(app.url, '{"service_version": "1.0",, }');
    expect(res.status).toBe(400);
    expect(res.body.error_type).toBe("validation");
    expect(res.body.error).toMatch(/not valid JSON: .*position \d+/);
  });

  it("a body that does not decompress as its Content-Encoding says -> 400 validation, not 500", async () => {
    for (const encoding of ["gzip", "deflate", "br"]) {
      const res = await post(app.url, job("echo", { text: "x" }), {
        "content-encoding": encoding,
      });
      expect(res.status, encoding).toBe(400);
      expect(res.body.error_type).toBe("validation");
      expect(res.body.error).toContain("does not decompress as its Content-Encoding says");
    }
  });

  it("body over maxBodyBytes -> 413 validation", async () => {
    const res = await post(app.url, job("echo", { text: "x".repeat(3000) }));
    expect(res.status).toBe(413);
    expect(res.body).toEqual(failed("validation"));
    expect(res.body.error).toContain("2048");
  });

  it("a path parameter that is not valid percent-encoding -> 400 validation naming it, not 500", async () => {
    for (const path of ["/jobs/%E0%A4%A", "/a2a/rest/tasks/%E0:cancel", "/a2a/rest/v1/tasks/%"]) {
      const method = path.endsWith(":cancel") ? "POST" : "GET";
      const res = await fetch(`${app.url}${path}`, { method });
      expect(res.status, path).toBe(400);
      const body: any = await res.json();
      expect(body).toEqual(failed("validation"));
      expect(body.error).toContain(
        `malformed percent-encoding in the path ${JSON.stringify(path)}`,
      );
    }
  });

  it("unknown route -> 404 naming method and path", async () => {
    const res = await fetch(`${app.url}/nope`, { method: "DELETE" });
    expect(res.status).toBe(404);
    const body: any = await res.json();
    expect(body).toEqual(failed("validation"));
    expect(body.error).toContain("DELETE /nope");
  });

  it.each([
    ["GET", "/execute", "POST"],
    ["POST", "/health", "GET, HEAD"],
    ["PUT", "/about", "GET, HEAD"],
  ])("%s %s -> 405 with Allow: %s", async (method, path, allow) => {
    const res = await fetch(`${app.url}${path}`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe(allow);
    expect(await res.json()).toEqual(failed("validation"));
  });
});

describe("deadlines (steps 4 and 5)", () => {
  it("deadline already passed on arrival -> 408, handler not run", async () => {
    const before = agent.calls.echo ?? 0;
    const res = await post(app.url, job("echo", { text: "x" }, { deadline: nowSeconds() - 1 }));
    expect(res.status).toBe(408);
    expect(res.body).toEqual(failed("deadline"));
    expect(res.body.error).toContain("already passed");
    expect(agent.calls.echo ?? 0).toBe(before);
  });

  it("handler that honours the signal: 408, ctx.signal aborted with a DeadlineError", async () => {
    const res = await post(app.url, job("slow", { ms: 5000 }, { deadline: Date.now() / 1000 + 1 }));
    expect(res.status).toBe(408);
    expect(res.body).toEqual(failed("deadline"));
    const reason = await agent.aborted;
    expect((reason as Error).name).toBe("DeadlineError");
    expect(agent.seen.slow!.ctx.signal.aborted).toBe(true);
  });

  it("handler that ignores the signal still gets 408 at the deadline", async () => {
    const res = await post(
      app.url,
      job("slow", { ms: 1500, ignoreSignal: true }, { deadline: Date.now() / 1000 + 0.3 }),
    );
    expect(res.status).toBe(408);
    expect(res.body.error_type).toBe("deadline");
  });

  it("a deadline beyond setTimeout's 2^31-1 ms limit does not fire early", async () => {
    // 60 days: above the default MAX_DEADLINE_SECONDS (7 days), so this app allows 90.
    await withApp({ devMode: true, maxDeadlineSeconds: 90 * 86400 }, async (far) => {
      const res = await post(
        far.url,
        job("slow", { ms: 100 }, { deadline: nowSeconds() + 60 * 24 * 3600 }),
      );
      expect(res.status).toBe(200);
      expect(res.body.output).toEqual({ text: "done" });
    });
  });

  it("passes deadline, jobId, capability and a logger to the handler", async () => {
    const request = job("echo", { text: "x" });
    await post(app.url, request);
    const ctx = agent.seen.echo!.ctx;
    expect(ctx).toMatchObject({
      jobId: request.job_id,
      capability: "echo",
      deadline: request.deadline,
    });
    expect(ctx.signal.aborted).toBe(false);
    expect(typeof ctx.logger.info).toBe("function");
  });
});

describe("handler errors (steps 7 and 8)", () => {
  /** Runs the "throws" handler with `kind`: the answer has `status` and a failed body of that type. */
  async function thrown(kind: string, status: number, errorType: string, error: string) {
    const request = job("throws", { text: kind });
    const res = await post(app.url, request);
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ status: "failed", error_type: errorType, error });
    return { request, res };
  }

  it("ValidationError -> 400 with its message", async () => {
    await thrown("validation", 400, "validation", "text: the handler does not like it");
  });

  it("DeadlineError -> 408 with its message", async () => {
    await thrown("deadline", 408, "deadline", "upstream too slow");
  });

  it("InternalError -> 500 generic; the real message only in the log", async () => {
    const { res } = await thrown("internal", 500, "internal", GENERIC_INTERNAL_MESSAGE);
    expect(res.text).not.toContain("hunter2");
    expect(logText(app.logger)).toContain("hunter2");
  });

  it.each(["payment", "capability"])(
    "%s error thrown by a handler -> 500 internal and a warning",
    async (kind) => {
      const { request } = await thrown(kind, 500, "internal", GENERIC_INTERNAL_MESSAGE);
      const warn = app.logger.lines.find(
        (l) => l.level === "warn" && l.fields.job_id === request.job_id,
      );
      expect(warn?.message).toMatch(/reported as internal/);
    },
  );

  it.each(["type-error", "string"])(
    "unhandled exception (%s) -> 500 that leaks nothing; logged with job id",
    async (kind) => {
      const { request, res } = await thrown(kind, 500, "internal", GENERIC_INTERNAL_MESSAGE);
      expect(res.text).not.toMatch(/secret|TypeError|stack/i);
      const logged = app.logger.lines.find(
        (l) => l.level === "error" && l.fields.job_id === request.job_id,
      );
      expect(JSON.stringify(logged?.fields)).toMatch(/secret/);
    },
  );
});

describe("CORS", () => {
  it("every answer allows any origin by default and exposes the payment headers", async () => {
    for (const res of [
      await fetch(`${app.url}/health`),
      await fetch(`${app.url}/nope`),
      await fetch(`${app.url}/execute`, { method: "POST", body: "{}" }),
    ]) {
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-expose-headers")).toBe(
        "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, X-Request-Id, Retry-After",
      );
    }
  });

  it.each([
    ["/execute", "POST, OPTIONS"],
    ["/health", "GET, HEAD, OPTIONS"],
  ])(
    "preflight OPTIONS %s -> 204 with methods %s and the payment request headers",
    async (path, methods) => {
      const res = await fetch(`${app.url}${path}`, {
        method: "OPTIONS",
        headers: {
          Origin: "https://app.example.com",
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "content-type, payment-signature",
        },
      });
      expect(res.status).toBe(204);
      expect(await res.text()).toBe("");
      expect(res.headers.get("access-control-allow-methods")).toBe(methods);
      expect(res.headers.get("access-control-allow-headers")).toBe(
        "Content-Type, PAYMENT-SIGNATURE, X-PAYMENT, X-Request-Id, Prefer",
      );
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
    },
  );

  it("OPTIONS on an unknown path is still a 404", async () => {
    const res = await fetch(`${app.url}/nope`, { method: "OPTIONS" });
    expect(res.status).toBe(404);
  });

  it("CORS_ORIGIN restricts the allowed origin; 402s carry the headers too", async () => {
    await withApp(
      { ...PRODUCTION, env: { CORS_ORIGIN: "https://app.example.com" } },
      async (prod) => {
        const res = await post(prod.url, job("echo", { text: "x" }));
        expect(res.status).toBe(402);
        expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
        expect(res.headers.get("access-control-expose-headers")).toContain("PAYMENT-REQUIRED");
      },
    );
  });
});
