// TRUST_PROXY: the client address every request's log lines carry, and the URL a 402 names, come from
// X-Forwarded-* only behind a proxy the seller said to believe. Without it, a client that sends its
// own X-Forwarded-For is logged at its real address (a spoofed header changes nothing).
import { describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../templates/runtime/config.js";
import { job, post, PRODUCTION, withApp } from "./helpers.js";

const SPOOFED = "203.0.113.7";
const LOOPBACK = /^(::ffff:)?127\.0\.0\.1$|^::1$/;

/** One dev-mode job sent with `headers`: the client address its "job finished" line carries. */
async function loggedClient(env: Record<string, string>, headers: Record<string, string>) {
  return withApp({ devMode: true, env }, async ({ url, logger }) => {
    const res = await post(url, job("echo", { text: "a" }), headers);
    expect(res.status).toBe(200);
    const line = logger.lines.find((l) => l.message === "job finished");
    return line?.fields.client;
  });
}

describe("the client address in log lines", () => {
  it("without TRUST_PROXY is the connection's, whatever X-Forwarded-For says", async () => {
    expect(await loggedClient({}, { "x-forwarded-for": SPOOFED })).toMatch(LOOPBACK);
  });

  it("behind a trusted proxy (TRUST_PROXY=loopback, or 1 hop) is the one X-Forwarded-For names", async () => {
    const headers = { "x-forwarded-for": SPOOFED };
    expect(await loggedClient({ TRUST_PROXY: "loopback" }, headers)).toBe(SPOOFED);
    expect(await loggedClient({ TRUST_PROXY: "127.0.0.1/8, ::1" }, headers)).toBe(SPOOFED);
    // One hop: the proxy's own view of the client, the last entry; what the client wrote before it is not believed.
    const chain = { "x-forwarded-for": `198.51.100.1, ${SPOOFED}` };
    expect(await loggedClient({ TRUST_PROXY: "1" }, chain)).toBe(SPOOFED);
  });

  it("behind a proxy that is not the one trusted is the connection's", async () => {
    const headers = { "x-forwarded-for": SPOOFED };
    expect(await loggedClient({ TRUST_PROXY: "10.0.0.0/8" }, headers)).toMatch(LOOPBACK);
  });

  it("is on a refused request's line too", async () => {
    await withApp({ devMode: true, env: {} }, async ({ url, logger }) => {
      await fetch(`${url}/nowhere`, { headers: { "x-forwarded-for": SPOOFED } });
      const line = logger.lines.find((l) => l.message === "request refused");
      expect(line?.fields.client).toMatch(LOOPBACK);
    });
  });
});

describe("X-Forwarded-Proto and -Host in the 402's resource (no PUBLIC_URL)", () => {
  const forwarded = { "x-forwarded-proto": "https", "x-forwarded-host": "agent.example.com" };

  async function resource(env: Record<string, string>): Promise<string> {
    return withApp({ ...PRODUCTION, env }, async ({ url }) => {
      const res = await post(url, job("echo", { text: "a" }), forwarded);
      expect(res.status).toBe(402);
      return res.body.accepts[0].resource as string;
    });
  }

  it("are ignored without TRUST_PROXY", async () => {
    expect(await resource({})).toMatch(/^http:\/\/(127\.0\.0\.1|localhost):\d+\/execute$/);
  });

  it("are believed from a trusted proxy", async () => {
    expect(await resource({ TRUST_PROXY: "loopback" })).toBe("https://agent.example.com/execute");
  });
});

describe("TRUST_PROXY's value", () => {
  it("is refused, naming the variable, when it is no hop count nor list of addresses", () => {
    for (const value of ["true", "0", "11", "10.0.0.0/33", "proxy.example.com", "1.2.3.4/8/1"]) {
      let error: unknown;
      try {
        resolveConfig({ ...PRODUCTION, env: { TRUST_PROXY: value } });
      } catch (err) {
        error = err;
      }
      expect(error, value).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.join("\n"), value).toMatch(
        /^TRUST_PROXY is .*: set it to the number of proxies/,
      );
    }
  });

  it("is off when unset or off; a hop count, or a list of addresses", () => {
    const of = (value?: string) =>
      resolveConfig({ ...PRODUCTION, env: value === undefined ? {} : { TRUST_PROXY: value } })
        .trustProxy;
    expect(of()).toBe(false);
    expect(of("off")).toBe(false);
    expect(of("2")).toBe(2);
    expect(of("Loopback, 172.16.0.0/12,fd00::/8")).toEqual([
      "loopback",
      "172.16.0.0/12",
      "fd00::/8",
    ]);
  });
});
