// ops/redact.ts: URLs as messages show them (no user info, no query, no key-like path segment), and secrets
// found in a text whatever their encoding, while a text that holds none is left as it is.
import { describe, expect, it } from "vitest";
import {
  redactDeep,
  redactText,
  redactUrl,
  scrubUrl,
  urlSecrets,
} from "../../templates/runtime/ops/redact.js";

describe("redactUrl", () => {
  it("keeps scheme, host and path; drops user info and query; replaces key-like path segments", () => {
    expect(
      redactUrl("https://alice:pw@rpc.example.com:8443/v2/AbCdEf0123456789xyzKEY?api-key=k"),
    ).toBe("https://rpc.example.com:8443/v2/[redacted]");
    expect(redactUrl("https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef")).toBe(
      "https://mainnet.infura.io/v3/[redacted]",
    );
    expect(redactUrl("https://x402.org/facilitator", "origin")).toBe("https://x402.org");
    expect(redactUrl("https://x402.org/facilitator")).toBe("https://x402.org/facilitator");
    expect(redactUrl("not a url")).toBe("(not a URL)");
  });

  it("scrubUrl takes the URL and each of its secrets out of a message", () => {
    const url = "http://bob:s3cret-pw@127.0.0.1:9/x?token=tok-123456";
    expect(scrubUrl(`fetch failed for ${url} (token tok-123456, user bob s3cret-pw)`, url)).toBe(
      "fetch failed for http://127.0.0.1:9/x (token [redacted], user bob [redacted])",
    );
  });
});

describe("redactText and redactDeep", () => {
  const secret = "k+ApiKey/7f3a9c2e";
  it.each([
    ["as is", secret],
    [
      "JSON \\u escapes, as text",
      [...secret].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""),
    ],
    ["percent-encoded", encodeURIComponent(secret)],
    ["HTML character references", [...secret].map((c) => `&#${c.charCodeAt(0)};`).join("")],
    ["base64 inside a longer base64 text", Buffer.from(`x-api-key=${secret};`).toString("base64")],
    ["base64url at another alignment", Buffer.from(`ab${secret}`).toString("base64url")],
    ["hex", Buffer.from(secret).toString("hex")],
  ])("finds a secret written %s", (_, written) => {
    const out = redactText(`reason: ${written}.`, [secret]);
    expect(out).toContain("[redacted]");
    expect(out).not.toContain(secret);
  });

  it("leaves a text without secrets as it is (escapes included)", () => {
    const text = "a%20b \\u0041 &amp; aGVsbG8=";
    expect(redactText(text, ["k+ApiKey/7f3a9c2e"])).toBe(text);
  });

  it("redactDeep reaches every string of a parsed answer, keys included, and keeps __proto__ an own key", () => {
    const parsed = JSON.parse(
      '{"a":["x k+ApiKey/7f3a9c2e"],"k+ApiKey/7f3a9c2e":1,"__proto__":{"b":"k+ApiKey/7f3a9c2e"}}',
    );
    const out = redactDeep(parsed, ["k+ApiKey/7f3a9c2e"]);
    expect(JSON.stringify(out)).not.toContain("k+ApiKey/7f3a9c2e");
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
});

describe("urlSecrets", () => {
  it("takes user, password, credential-like query values and key-like path segments, not plain query values", () => {
    const url =
      "https://alice:pw%2B1@f.example/v2/AbCdEf0123456789xyzKEY?network=base&api-key=key-0001&access_token=tok-0002";
    expect(new Set(urlSecrets(url))).toEqual(
      new Set(["alice", "pw%2B1", "pw+1", "key-0001", "tok-0002", "AbCdEf0123456789xyzKEY"]),
    );
  });
});
