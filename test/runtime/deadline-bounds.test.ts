// Implausible deadlines: further ahead than MAX_DEADLINE_SECONDS (default 7 days) is a 400
// `validation` naming the likely unit mistake (milliseconds), before anything is paid or run.
import { afterEach, describe, expect, it } from "vitest";
import {
  deadlineProblem,
  MAX_DEADLINE_AHEAD_SECONDS,
  parseRequest,
} from "../../templates/runtime/jobs/request.js";
import { ConfigError, resolveConfig } from "../../templates/runtime/config.js";
import { ValidationError } from "../../templates/runtime/errors.js";
import { job, makeAgent, nowSeconds, post, production, startApp } from "./helpers.js";

const NOW_MS = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const NOW = NOW_MS / 1000;
const DAY = 86_400;

describe("deadlineProblem (pure)", () => {
  it("defaults to 7 days", () => {
    expect(MAX_DEADLINE_AHEAD_SECONDS).toBe(7 * DAY);
  });

  it.each([
    ["a minute ahead", NOW + 60],
    ["exactly the bound", NOW + 7 * DAY],
    ["fractional seconds", NOW + 0.25],
    ["in the past (the deadline check's business, not this one)", NOW - 3600],
  ])("accepts %s", (_name, deadline) => {
    expect(deadlineProblem(deadline, 7 * DAY, NOW_MS)).toBeUndefined();
  });

  it("a deadline in milliseconds: names the unit and the value to send", () => {
    expect(deadlineProblem(NOW_MS + 60_000, 7 * DAY, NOW_MS)).toBe(
      `deadline: ${NOW_MS + 60_000} is about 55944 years from now; deadlines are Unix timestamps in SECONDS (this looks like milliseconds: use ${NOW + 60})`,
    );
    // Date.now() itself, or a fractional millisecond value, rounds down to whole seconds.
    expect(deadlineProblem(NOW_MS + 1500.5, 7 * DAY, NOW_MS)).toMatch(
      new RegExp(`this looks like milliseconds: use ${NOW + 1}\\)$`),
    );
  });

  it("too far ahead in seconds (year 2100): says the bound and how far it is", () => {
    expect(deadlineProblem(4102444800, 7 * DAY, NOW_MS)).toBe(
      "deadline: 4102444800 is more than 7 days from now (MAX_DEADLINE_SECONDS), about 74 years: send a Unix timestamp in seconds at most 7 days ahead",
    );
  });

  it("year 2100 in milliseconds is still implausible in seconds: no milliseconds hint", () => {
    expect(deadlineProblem(4102444800000, 7 * DAY, NOW_MS)).toBe(
      "deadline: 4102444800000 is more than 7 days from now (MAX_DEADLINE_SECONDS), about 129943 years: send a Unix timestamp in seconds at most 7 days ahead",
    );
  });

  it("durations read naturally, for any bound and any distance", () => {
    expect(deadlineProblem(NOW + 2 * 3600, 3600, NOW_MS)).toMatch(
      /is more than 1 hour from now \(MAX_DEADLINE_SECONDS\), about 2 hours: .* at most 1 hour ahead$/,
    );
    expect(deadlineProblem(NOW + 10 * DAY, 90 * 60, NOW_MS)).toMatch(
      /more than 90 minutes from now .*, about 10 days:/,
    );
    expect(deadlineProblem(NOW + 200, 61, NOW_MS)).toMatch(
      /more than 61 seconds from now .*, about 3 minutes:/,
    );
    expect(deadlineProblem(1e300, 7 * DAY, NOW_MS)).toMatch(
      /^deadline: 1e\+300 is more than 7 days .*, more than a million years:/,
    );
  });

  it("parseRequest reports it with the other problems, and takes the bound", () => {
    const body = {
      service_version: "1.0",
      job_id: "",
      task: { capability: "echo", input: {} },
      deadline: NOW + 2 * DAY,
    };
    expect(() => parseRequest(body, { maxDeadlineSeconds: DAY, nowMs: NOW_MS })).toThrow(
      new ValidationError(
        "job_id: must be a non-empty string of at most 256 characters; deadline: " +
          `${NOW + 2 * DAY} is more than 1 day from now (MAX_DEADLINE_SECONDS), about 2 days: send a Unix timestamp in seconds at most 1 day ahead`,
      ),
    );
    expect(
      parseRequest({ ...body, job_id: "j" }, { maxDeadlineSeconds: 3 * DAY, nowMs: NOW_MS })
        .deadline,
    ).toBe(NOW + 2 * DAY);
    // Without limits: the default bound and the real clock.
    expect(() => parseRequest({ ...body, job_id: "j", deadline: Date.now() })).toThrow(
      /this looks like milliseconds/,
    );
  });
});

describe("MAX_DEADLINE_SECONDS / option maxDeadlineSeconds", () => {
  it("defaults to 604800, reads the env, and the option wins", () => {
    expect(resolveConfig({ devMode: true, env: {} }).maxDeadlineSeconds).toBe(604800);
    expect(
      resolveConfig({ devMode: true, env: { MAX_DEADLINE_SECONDS: "3600" } }).maxDeadlineSeconds,
    ).toBe(3600);
    expect(
      resolveConfig({
        devMode: true,
        env: { MAX_DEADLINE_SECONDS: "3600" },
        maxDeadlineSeconds: 120,
      }).maxDeadlineSeconds,
    ).toBe(120);
  });

  it.each(["abc", "59", "0", "-5", "1.5", "315360001"])("refuses %j", (value) => {
    let err: unknown;
    try {
      resolveConfig({ devMode: true, env: { MAX_DEADLINE_SECONDS: value } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      `MAX_DEADLINE_SECONDS is ${JSON.stringify(value)}: set it to a whole number of seconds from 60 to 315360000 (default 604800, 7 days)`,
    ]);
  });
});

describe("over HTTP", () => {
  let app: Awaited<ReturnType<typeof startApp>> | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it("a deadline in milliseconds -> 400 validation, handler not run", async () => {
    const agent = makeAgent();
    app = await startApp(agent, { devMode: true });
    const deadline = Date.now() + 60_000;
    const res = await post(app.url, job("echo", { text: "x" }, { deadline }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: "failed", error_type: "validation" });
    expect(res.body.error).toMatch(
      new RegExp(
        `^deadline: ${deadline} is about \\d+ years from now; deadlines are Unix timestamps in SECONDS \\(this looks like milliseconds: use \\d+\\)$`,
      ),
    );
    expect(agent.calls.echo).toBeUndefined();
  });

  it("year 2100 -> 400; 6 days ahead runs", async () => {
    app = await startApp(makeAgent(), { devMode: true });
    const far = await post(app.url, job("echo", { text: "x" }, { deadline: 4102444800 }));
    expect(far.status).toBe(400);
    expect(far.body.error).toMatch(/^deadline: 4102444800 is more than 7 days from now/);
    const near = await post(
      app.url,
      job("echo", { text: "x" }, { deadline: nowSeconds() + 6 * DAY }),
    );
    expect(near.status).toBe(200);
  });

  it("follows option maxDeadlineSeconds and env MAX_DEADLINE_SECONDS", async () => {
    app = await startApp(makeAgent(), { devMode: true, maxDeadlineSeconds: 3600 });
    const res = await post(app.url, job("echo", { text: "x" }, { deadline: nowSeconds() + 7200 }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/more than 1 hour from now \(MAX_DEADLINE_SECONDS\)/);
    await app.close();
    app = await startApp(makeAgent(), {
      devMode: true,
      env: { MAX_DEADLINE_SECONDS: String(90 * DAY) },
    });
    const slow = await post(
      app.url,
      job("slow", { ms: 50 }, { deadline: nowSeconds() + 60 * DAY }),
    );
    expect(slow.status).toBe(200);
  });

  it("in production it is refused before payment: 400, not 402", async () => {
    app = await startApp(makeAgent(), production());
    const res = await post(app.url, job("echo", { text: "x" }, { deadline: Date.now() }));
    expect(res.status).toBe(400);
    expect(res.body.error_type).toBe("validation");
    expect(res.body.error).toMatch(/this looks like milliseconds/);
  });
});
