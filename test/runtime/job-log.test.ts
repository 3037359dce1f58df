// Error answers can be found in the log: every `job finished` line of a 4xx/5xx carries the message
// the client got (`reason`, clipped), and transport errors (404/405/413/415, bad JSON) are logged as
// `request refused` with the request id, method, path, status and reason.
import { afterEach, describe, expect, it } from "vitest";
import { GENERIC_INTERNAL_MESSAGE, ValidationError } from "../../templates/runtime/errors.js";
import { capability, job, makeAgent, post, production, startApp, type LogLine } from "./helpers.js";

let app: Awaited<ReturnType<typeof startApp>> | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const finished = (lines: LogLine[]): LogLine[] => lines.filter((l) => l.message === "job finished");
const refused = (lines: LogLine[]): LogLine[] =>
  lines.filter((l) => l.message === "request refused");

describe("job finished", () => {
  it("a completed job has no reason", async () => {
    app = await startApp(makeAgent(), { devMode: true });
    const res = await post(app.url, job("echo", { text: "x" }, { job_id: "ok-1" }));
    expect(res.status).toBe(200);
    const [line] = finished(app.logger.lines);
    expect(line?.fields).toMatchObject({
      job_id: "ok-1",
      capability: "echo",
      status: 200,
      outcome: "completed",
    });
    expect(line?.fields).not.toHaveProperty("reason");
  });

  it("a 400 logs the message the client got", async () => {
    app = await startApp(makeAgent(), { devMode: true });
    const res = await post(app.url, job("echo", { text: "" }, { job_id: "bad-input" }));
    expect(res.status).toBe(400);
    const [line] = finished(app.logger.lines);
    expect(line?.level).toBe("info");
    expect(line?.fields).toMatchObject({
      job_id: "bad-input",
      capability: "echo",
      status: 400,
      outcome: "validation",
      reason: res.body.error,
    });
  });

  it("an unknown capability logs the name asked for", async () => {
    app = await startApp(makeAgent(), { devMode: true });
    const res = await post(app.url, job("nope", {}, { job_id: "cap-1" }));
    expect(res.status).toBe(400);
    expect(finished(app.logger.lines)[0]?.fields).toMatchObject({
      job_id: "cap-1",
      capability: "nope",
      outcome: "capability",
      reason: res.body.error,
    });
    expect(res.body.error).toMatch(/^unknown capability "nope"/);
  });

  it("a request that failed its own checks logs what it said (job_id, capability), clipped", async () => {
    app = await startApp(makeAgent(), { devMode: true });
    const res = await post(app.url, {
      job_id: "no-version",
      task: { capability: "echo", input: {} },
      deadline: 5,
    });
    expect(res.status).toBe(400);
    expect(finished(app.logger.lines)[0]?.fields).toMatchObject({
      job_id: "no-version",
      capability: "echo",
      status: 400,
      outcome: "validation",
      reason: res.body.error,
    });

    const long = "j".repeat(1000);
    await post(app.url, { ...job("echo", { text: "x" }), job_id: long });
    const line = finished(app.logger.lines)[1]!;
    expect(line.fields.job_id).toBe(`${"j".repeat(256)}… (744 more characters)`);
    expect(line.fields.reason).toMatch(/^job_id: must be a non-empty string/);
  });

  it("a body that is no job request at all: status and reason, no job_id", async () => {
    app = await startApp(makeAgent(), { devMode: true });
    const res = await post(app.url, [1, 2]);
    expect(res.status).toBe(400);
    const fields = finished(app.logger.lines)[0]?.fields;
    expect(fields).toMatchObject({ status: 400, outcome: "validation", reason: res.body.error });
    expect(fields?.job_id).toBeUndefined();
    expect(fields?.request_id).toEqual(expect.any(String));
  });

  it("an internal error logs the generic message the client saw (details are logged apart)", async () => {
    app = await startApp(makeAgent(), { devMode: true });
    const res = await post(app.url, job("throws", { text: "internal" }, { job_id: "int-1" }));
    expect(res.status).toBe(500);
    expect(finished(app.logger.lines)[0]?.fields).toMatchObject({
      job_id: "int-1",
      status: 500,
      outcome: "internal",
      reason: GENERIC_INTERNAL_MESSAGE,
    });
    expect(JSON.stringify(finished(app.logger.lines))).not.toContain("hunter2");
  });

  it("a 402 logs the payment message: missing, and refused", async () => {
    app = await startApp(makeAgent(), production());
    const missing = await post(app.url, job("echo", { text: "x" }, { job_id: "pay-1" }));
    expect(missing.status).toBe(402);
    const garbage = await post(app.url, job("echo", { text: "x" }, { job_id: "pay-2" }), {
      "payment-signature": "not base64 json",
    });
    expect(garbage.status).toBe(402);
    const [first, second] = finished(app.logger.lines);
    expect(first?.fields).toMatchObject({
      job_id: "pay-1",
      status: 402,
      outcome: "payment_required",
      reason: missing.body.error,
    });
    expect(second?.fields).toMatchObject({
      job_id: "pay-2",
      status: 402,
      outcome: "payment",
      reason: garbage.body.error,
    });
  });

  it("a long message is clipped to 500 characters in the log (the client gets it whole)", async () => {
    const agent = makeAgent();
    const schema = { type: "object", properties: { text: { type: "string" } } };
    agent.capabilities.wordy = capability("wordy", "10000", schema, schema, async () => {
      throw new ValidationError(`text: ${"w".repeat(2000)}`);
    });
    app = await startApp(agent, { devMode: true });
    const res = await post(app.url, job("wordy", { text: "x" }));
    expect(res.status).toBe(400);
    expect(res.body.error).toHaveLength(2006);
    expect(finished(app.logger.lines)[0]?.fields.reason).toBe(
      `text: ${"w".repeat(494)}… (1506 more characters)`,
    );
  });
});

describe("request refused (transport errors)", () => {
  const send = (url: string, path: string, init: RequestInit & { id?: string } = {}) =>
    fetch(`${url}${path}`, {
      ...init,
      headers: { "x-request-id": init.id ?? "req-1", ...(init.headers as object) },
    });

  it("404 and 405, with the caller's request id, address, method, path, status and reason", async () => {
    app = await startApp(makeAgent(), { devMode: true });
    const notFound = await send(app.url, "/nope?token=secret", { id: "trace-404" });
    expect(notFound.status).toBe(404);
    const wrongMethod = await send(app.url, "/execute", { method: "GET", id: "trace-405" });
    expect(wrongMethod.status).toBe(405);
    const lines = refused(app.logger.lines);
    /** The line GET `path` (request id `id`) was refused with: its status and the answer's error. */
    const line = async (id: string, path: string, answer: Response) => ({
      level: "info",
      message: "request refused",
      fields: {
        request_id: id,
        client: expect.stringMatching(/127\.0\.0\.1$/),
        method: "GET",
        path,
        status: answer.status,
        reason: ((await answer.json()) as { error: string }).error,
      },
    });
    expect(lines).toEqual([
      await line("trace-404", "/nope", notFound),
      await line("trace-405", "/execute", wrongMethod),
    ]);
    expect(lines[1]?.fields.reason).toMatch(/^method GET is not allowed on \/execute; use POST/);
    expect(JSON.stringify(lines)).not.toContain("secret");
  });

  it("415, 413 and a body that is not JSON", async () => {
    app = await startApp(makeAgent(), { devMode: true, maxBodyBytes: 100 });
    const url = app.url;
    const noJson = await send(url, "/execute", {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "hi",
    });
    const tooBig = await send(url, "/execute", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "x".repeat(500) }),
    });
    const broken = await send(url, "/execute", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{nope",
    });
    expect([noJson.status, tooBig.status, broken.status]).toEqual([415, 413, 400]);
    const lines = refused(app.logger.lines);
    expect(lines.map((l) => [l.fields.status, l.fields.method, l.fields.path])).toEqual([
      [415, "POST", "/execute"],
      [413, "POST", "/execute"],
      [400, "POST", "/execute"],
    ]);
    expect(lines[0]?.fields.reason).toBe(
      'Content-Type must be application/json (got "text/plain")',
    );
    expect(lines[1]?.fields.reason).toBe("request body is larger than 100 bytes");
    expect(lines[2]?.fields.reason).toMatch(/^request body is not valid JSON: /);
    // No job ran, so no job line.
    expect(finished(app.logger.lines)).toEqual([]);
  });

  it("a long path is clipped", async () => {
    app = await startApp(makeAgent(), { devMode: true });
    await send(app.url, `/${"p".repeat(3000)}`);
    const [line] = refused(app.logger.lines);
    expect(line?.fields.path).toBe(`/${"p".repeat(199)}… (2801 more characters)`);
    expect(String(line?.fields.reason).length).toBeLessThanOrEqual(530);
  });
});
