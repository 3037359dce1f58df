// One rule for every answer that names the service's URL (the 402's `resource` and PAYMENT-REQUIRED,
// the discovery documents): PUBLIC_URL, else the request's Host; a Host that makes no valid URL is
// refused with a 400 validation error and never written into a document that promises `format: uri`.
import { request as httpRequest } from "node:http";
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { isValidHost } from "../../templates/runtime/http/base-url.js";
import { devAndProdForTests } from "./dev-and-prod.js";
import { withDiscovery } from "./discovery-fixture.js";
import {
  job,
  makeAgent,
  production,
  recordingSettler,
  startApp,
  unb64,
  v2Header,
  offerV2,
  anvilAccount,
  signAuthorization,
} from "./helpers.js";

// The oracle: ajv-formats' `uri`, the format the OpenAPI document declares for these URLs.
const addFormats = addFormatsModule as unknown as (ajv: Ajv, formats: string[]) => Ajv;
const ajv = addFormats(new Ajv(), ["uri"]);
const isUri = ajv.compile({ type: "string", format: "uri" });

const VALID = [
  "agent.example.com",
  "agent.example.com:8080",
  "127.0.0.1:3000",
  "localhost",
  "my_service:3000", // docker compose service names have underscores
  "[::1]:3000",
  "[2001:db8::1]",
  "xn--bcher-kva.example",
];
const INVALID = [
  "a{b}",
  "a b",
  'evil.com/"><x',
  "x.com:99999999",
  "x.com:65536",
  "[::::::::]",
  "[1.2.3.4]",
  "a%zz",
  "user@host",
  "host:",
  "a;rm -rf",
  "",
];

describe("isValidHost", () => {
  it("accepts exactly Hosts that make a valid URI (ajv-formats) and a URL Node parses", () => {
    for (const host of VALID) {
      expect(isValidHost(host), host).toBe(true);
      expect(isUri(`http://${host}/execute`), host).toBe(true);
      expect(new URL(`http://${host}/execute`).pathname, host).toBe("/execute");
    }
    for (const host of INVALID) expect(isValidHost(host), host).toBe(false);
  });

  it("never accepts a Host whose URL is not a URI (random strings over the URL alphabet)", () => {
    const alphabet = "aZ09.-_~:[]{}%@/?#!$&'()*+,;= \"<>\\^`|";
    let seed = 20;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let accepted = 0;
    for (let i = 0; i < 5000; i++) {
      const length = 1 + Math.floor(random() * 12);
      let host = "";
      for (let j = 0; j < length; j++) host += alphabet[Math.floor(random() * alphabet.length)];
      if (!isValidHost(host)) continue;
      accepted++;
      expect(isUri(`http://${host}/execute`), host).toBe(true);
      expect(() => new URL(`http://${host}/execute`), host).not.toThrow();
    }
    expect(accepted).toBeGreaterThan(50); // the check above really ran
  });
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A request with a Host header of our choosing (fetch does not let us set one). */
function send(
  url: string,
  method: string,
  path: string,
  host: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        headers: {
          host,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const DOCUMENTS = ["/openapi.json", "/.well-known/agent-card.json", "/llms.txt"];

function expectHostRefused(answer: Answer, host: string): void {
  expect(answer.status, host).toBe(400);
  expect(JSON.parse(answer.text)).toEqual({
    status: "failed",
    error_type: "validation",
    error: `the Host header ${JSON.stringify(host)} is not a valid host name, so this service's URL cannot be written into the answer; send a valid Host (or set PUBLIC_URL)`,
  });
  expect(answer.headers["payment-required"]).toBeUndefined();
  expect(answer.text).not.toContain(`://${host}`);
}

describe("an invalid Host, route by route", () => {
  const settler = recordingSettler();
  const apps = devAndProdForTests(production(settler));
  /** POST /execute of an echo job to `app` (production unless said), with `host` as its Host header. */
  const execute = (host: string, headers: Record<string, string> = {}, app = apps.prod) =>
    send(app.url, "POST", "/execute", host, job("echo", { text: "x" }), headers);

  it("production POST /execute: 400 validation instead of a 402 naming http://a{b}/execute", async () => {
    for (const host of ["a{b}", "x.com:99999"]) {
      const answer = await execute(host);
      expectHostRefused(answer, host);
    }
  });

  it("production POST /execute with a payment: refused the same way before anything runs or is charged", async () => {
    const payload = await signAuthorization(anvilAccount());
    const answer = await execute("a{b}", { "payment-signature": v2Header(offerV2(), payload) });
    expectHostRefused(answer, "a{b}");
    expect(apps.prodAgent.calls.echo ?? 0).toBe(0);
    expect(settler.calls).toEqual([]);
  });

  it("production POST /execute with a valid Host: the 402 names it, as a URI, in body and header", async () => {
    for (const host of ["my_service:3000", "[::1]:8080"]) {
      const answer = await execute(host);
      expect(answer.status, host).toBe(402);
      const resource = JSON.parse(answer.text).accepts[0].resource;
      expect(resource).toBe(`http://${host}/execute`);
      expect(isUri(resource)).toBe(true);
      const v2 = unb64(answer.headers["payment-required"] as string);
      expect(v2.resource.url).toBe(resource);
    }
  });

  it("every discovery document, in dev mode and production: the same 400", async () => {
    for (const app of [apps.dev, apps.prod])
      for (const path of DOCUMENTS)
        expectHostRefused(await send(app.url, "GET", path, "a{b}"), "a{b}");
  });

  it("dev POST /execute writes no URL, so its job runs whatever the Host", async () => {
    const answer = await execute("a{b}", {}, apps.dev);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ status: "completed", output: { text: "x" } });
  });

  it("with PUBLIC_URL the Host is never used, valid or not", async () => {
    const app = await startApp(withDiscovery(makeAgent()), {
      ...production(),
      publicUrl: "https://agent.example.com",
    });
    try {
      const paid = await execute("a{b}", {}, app);
      expect(paid.status).toBe(402);
      expect(JSON.parse(paid.text).accepts[0].resource).toBe("https://agent.example.com/execute");
      const doc = await send(app.url, "GET", "/openapi.json", "a{b}");
      expect(doc.status).toBe(200);
      expect(JSON.parse(doc.text).servers).toEqual([{ url: "https://agent.example.com" }]);
    } finally {
      await app.close();
    }
  });
});
