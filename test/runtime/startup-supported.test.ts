// The startup check of the facilitator route: GET /supported must list our network, or the server
// refuses to start (fail closed). Against a local stand-in; the real reference facilitator is in
// test/chain/supported.test.ts.
import { createServer, type Server as HttpServer, type ServerResponse } from "node:http";
import type { Server } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../templates/runtime/config.js";
import {
  checkFacilitator,
  describeKinds,
  displayUrl,
  FacilitatorError,
  fetchSupported,
  matchingKinds,
  supportProblem,
  type SupportedKind,
} from "../../templates/runtime/payments/facilitator.js";
import { startServer } from "../../templates/runtime/server.js";
import { captureLogger, logText, makeAgent, PAY_TO, recordingSettler } from "./helpers.js";
import { refusedStart } from "./refused-start.js";
import {
  closedUrl as unusedUrl,
  closeServer,
  healthOf,
  healthUntil,
  listenLocal,
  urlOf,
} from "./servers.js";
import { rejectionOf } from "../thrown.js";

const BASE = { v1Name: "base", caip2: "eip155:8453" };
const BASE_SEPOLIA = { v1Name: "base-sepolia", caip2: "eip155:84532" };
const CUSTOM = { v1Name: "eip155:31337", caip2: "eip155:31337" };

const kind = (x402Version: number, network: string, scheme = "exact"): SupportedKind => ({
  x402Version,
  scheme,
  network,
});
/** What the public testnet facilitator and the reference one list: v2 for their chain, v1 names. */
const TESTNET = [kind(2, "eip155:84532"), kind(1, "base-sepolia")];

describe("supportProblem (pure)", () => {
  it.each<[string, SupportedKind[], { v1Name: string; caip2: string }]>([
    ["a v2 kind with the CAIP-2 id", [kind(2, "eip155:84532")], BASE_SEPOLIA],
    ["a v2 kind that names the network by its v1 name", [kind(2, "base-sepolia")], BASE_SEPOLIA],
    ["v2 and v1 kinds", TESTNET, BASE_SEPOLIA],
    ["a v1-only facilitator listing the v1 name", [kind(1, "base")], BASE],
    ["a v1-only facilitator listing the CAIP-2 id", [kind(1, "eip155:8453")], BASE],
    ["a custom chain by its CAIP-2 id", [kind(2, "eip155:31337")], CUSTOM],
  ])("accepts %s", (_name, kinds, network) => {
    expect(supportProblem(kinds, network)).toBeUndefined();
  });

  it("refuses mainnet on the testnet facilitator, saying what it supports", () => {
    expect(supportProblem(TESTNET, BASE)).toBe(
      'does not settle "exact" payments on the configured network, base (eip155:8453). ' +
        "It supports: x402 v2 exact on eip155:84532; x402 v1 exact on base-sepolia",
    );
  });

  it("refuses a v1-only match from a facilitator that speaks v2 (the reference one lists every v1 name)", () => {
    const kinds = [kind(2, "eip155:84532"), kind(1, "base-sepolia"), kind(1, "base")];
    expect(supportProblem(kinds, BASE)).toMatch(
      /^lists "exact" payments on the configured network, base \(eip155:8453\), only for x402 v1, not among its x402 v2 kinds.*It supports: x402 v2 exact on eip155:84532; x402 v1 exact on base-sepolia, base$/,
    );
  });

  it("refuses another scheme on our network, and an empty list", () => {
    expect(supportProblem([kind(2, "eip155:8453", "upto")], BASE)).toMatch(
      /does not settle "exact" payments .* It supports: x402 v2 upto on eip155:8453$/,
    );
    expect(supportProblem([], BASE)).toMatch(/It supports: nothing \(an empty kinds list\)$/);
  });

  it("matchingKinds lists every exact kind for the network, both versions", () => {
    const kinds = [...TESTNET, kind(2, "eip155:8453"), kind(2, "eip155:84532", "upto")];
    expect(matchingKinds(kinds, BASE_SEPOLIA)).toEqual(TESTNET);
  });

  it("describeKinds is bounded and one line, whatever the facilitator sends", () => {
    const many = Array.from({ length: 100 }, (_, i) => kind(1, `net-${i}`));
    const text = describeKinds(many);
    expect(text).toMatch(/^x402 v1 exact on net-0, net-1, .*net-29; and 70 more$/);
    const hostile = describeKinds([kind(2, `evil\nnetwork${"x".repeat(500)}`, "ex\u2028act")]);
    expect(hostile).not.toMatch(/[\n\u2028]/);
    expect(hostile.length).toBeLessThan(200);
  });
});

describe("displayUrl", () => {
  it("keeps origin and path, drops credentials and query", () => {
    expect(displayUrl("https://user:secret@f.example.com/x402/?key=abc#h")).toBe(
      "https://f.example.com/x402/",
    );
    expect(displayUrl("nope")).toBe("(not a URL)");
  });
});

// ---- against a local stand-in facilitator ----

let answer: (res: ServerResponse) => void;
const requests: string[] = [];
let stub: HttpServer;
let url: string;
let closedUrl: string;

beforeAll(async () => {
  stub = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    answer(res);
  });
  url = `${await listenLocal(stub)}/facilitator/`;
  closedUrl = await unusedUrl();
});
afterAll(() => closeServer(stub));

const json = (status: number, body: unknown) => (res: ServerResponse) =>
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

async function supportedError(target = url, timeoutMs = 2000): Promise<FacilitatorError> {
  const err = await fetchSupported(target, timeoutMs).catch((e: unknown) => e);
  if (!(err instanceof FacilitatorError)) throw new Error(`expected a FacilitatorError: ${err}`);
  return err;
}

describe("fetchSupported", () => {
  it("GETs <url>/supported and returns the well-formed kinds", async () => {
    requests.length = 0;
    answer = json(200, {
      kinds: [
        { x402Version: 2, scheme: "exact", network: "eip155:84532", extra: { any: 1 } },
        { x402Version: "1", scheme: "exact", network: "base-sepolia" },
        { scheme: "exact", network: "no-version" },
        "junk",
        { x402Version: 2, scheme: 5, network: "x" },
      ],
      extensions: [],
      signers: {},
    });
    // `extra` is kept: a Solana kind's names the fee payer a 402 must offer.
    expect(await fetchSupported(url, 2000)).toEqual([
      { ...TESTNET[0], extra: { any: 1 } },
      TESTNET[1],
    ]);
    expect(requests).toEqual(["GET /facilitator/supported"]);
  });

  it.each<[string, (res: ServerResponse) => void, RegExp]>([
    ["non-2xx", json(404, { error: "no route" }), /\/facilitator\/supported answered HTTP 404: /],
    [
      "not JSON",
      (res) => res.writeHead(200).end("<html>"),
      /answered HTTP 200 without a "kinds" list/,
    ],
    ["no kinds list", json(200, { networks: ["base"] }), /without a "kinds" list/],
    ["kinds not a list", json(200, { kinds: "base" }), /without a "kinds" list/],
  ])("%s -> FacilitatorError", async (_name, reply, message) => {
    answer = reply;
    expect((await supportedError()).message).toMatch(message);
  });

  it("unreachable and silent facilitators -> FacilitatorError", async () => {
    expect((await supportedError(closedUrl)).message).toMatch(
      /facilitator http:\/\/127\.0\.0\.1:\d+\/supported is unreachable \(ECONNREFUSED\)/,
    );
    answer = () => undefined; // never answers
    expect((await supportedError(url, 200)).message).toMatch(/did not answer within 0.2 s/);
    // Port 9 is on fetch's list of bad ports: refused before any connection, with the reason.
    expect((await supportedError("http://127.0.0.1:9")).message).toBe(
      "facilitator http://127.0.0.1:9/supported is unreachable (fetch failed: bad port)",
    );
  });
});

const productionEnv = (network: string, facilitator: string) => ({
  PAY_TO,
  X402_NETWORK: network,
  X402_FACILITATOR_URL: facilitator,
});

const configError = (promise: Promise<unknown>) => rejectionOf(ConfigError, promise);

describe("checkFacilitator", () => {
  it("passes when the facilitator lists our network, logging the kinds that matched", async () => {
    answer = json(200, { kinds: [...TESTNET, kind(2, "eip155:8453", "upto")] });
    const logger = captureLogger();
    await checkFacilitator(resolveConfig({ env: productionEnv("base-sepolia", url) }), logger);
    const line = logger.lines.find((l) => l.message.includes("settles"));
    expect(line).toMatchObject({
      level: "info",
      message: 'the x402 facilitator settles "exact" payments on base-sepolia (eip155:84532)',
      fields: {
        facilitator: url,
        kinds: ["x402 v2 exact on eip155:84532", "x402 v1 exact on base-sepolia"],
      },
    });
    expect(logger.lines.filter((l) => l.level === "warn")).toEqual([]);
  });

  it("warns when v1 clients will be refused (no v1 kind for our network)", async () => {
    answer = json(200, { kinds: [kind(2, "eip155:84532")] });
    const logger = captureLogger();
    await checkFacilitator(resolveConfig({ env: productionEnv("base-sepolia", url) }), logger);
    expect(logText(logger)).toMatch(/warn .*no x402 v1 kind .*v1 clients \(X-PAYMENT\)/);
  });

  it("refuses mainnet on a testnet facilitator, naming the URL, the network, what it supports and what to do", async () => {
    answer = json(200, { kinds: TESTNET });
    const config = resolveConfig({ env: productionEnv("base", url) });
    const err = await configError(checkFacilitator(config, captureLogger()));
    expect(err.problems).toEqual([
      `the x402 facilitator (X402_FACILITATOR_URL) at ${url} does not settle "exact" payments on the configured network, base (eip155:8453). ` +
        "It supports: x402 v2 exact on eip155:84532; x402 v1 exact on base-sepolia. " +
        'To fix it, set X402_FACILITATOR_URL to a facilitator that settles "exact" payments on base (eip155:8453), ' +
        "or settle directly from this server: X402_RPC_URL and X402_SETTLER_KEY (that account pays the gas) instead of X402_FACILITATOR_URL",
    ]);
  });

  it("never repeats credentials or a query from the URL", async () => {
    const withSecrets = closedUrl.replace("http://", "http://user:pw@") + "/?apikey=secret";
    const config = resolveConfig({ env: productionEnv("base-sepolia", withSecrets) });
    const err = await configError(checkFacilitator(config, captureLogger()));
    expect(err.message).toMatch(
      /could not ask the x402 facilitator .* at http:\/\/127\.0\.0\.1:\d+\/ .*ECONNREFUSED/,
    );
    expect(err.message).not.toMatch(/secret|pw|user/);
  });

  it("refuses when the facilitator cannot be asked", async () => {
    const config = resolveConfig({ env: productionEnv("base-sepolia", closedUrl) });
    const err = await configError(checkFacilitator(config, captureLogger()));
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatch(
      new RegExp(
        `^could not ask the x402 facilitator \\(X402_FACILITATOR_URL\\) at ${closedUrl}/ which networks it settles: ` +
          "facilitator .*/supported is unreachable \\(ECONNREFUSED\\)\\. " +
          "The server does not start without knowing that payments on base-sepolia \\(eip155:84532\\) can be settled: " +
          "check the URL and that the facilitator is up, or set X402_FACILITATOR_URL to a facilitator .* X402_RPC_URL and X402_SETTLER_KEY",
      ),
    );
  });

  it("refuses a malformed or non-2xx answer", async () => {
    const config = resolveConfig({ env: productionEnv("base-sepolia", url) });
    answer = (res) => res.writeHead(200).end("not json");
    expect((await configError(checkFacilitator(config, captureLogger()))).message).toMatch(
      /without a "kinds" list/,
    );
    answer = json(502, { error: "bad gateway" });
    expect((await configError(checkFacilitator(config, captureLogger()))).message).toMatch(
      /answered HTTP 502/,
    );
  });

  it("is bounded by the settle timeout (and 10 s)", async () => {
    answer = () => undefined; // never answers
    const config = resolveConfig({
      env: { ...productionEnv("base-sepolia", url), X402_SETTLE_TIMEOUT_SECONDS: "1" },
    });
    const started = Date.now();
    const err = await configError(checkFacilitator(config, captureLogger()));
    expect(err.message).toMatch(/did not answer within 1 s/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("asks nothing in dev mode, for direct settlement or for a custom settler", async () => {
    requests.length = 0;
    const logger = captureLogger();
    await checkFacilitator(resolveConfig({ devMode: true, env: {} }), logger);
    await checkFacilitator(
      resolveConfig({ devMode: true, env: productionEnv("base", closedUrl) }),
      logger,
    );
    await checkFacilitator(
      resolveConfig({
        env: {
          PAY_TO,
          X402_NETWORK: "base",
          X402_RPC_URL: closedUrl,
          X402_SETTLER_KEY: `0x${"11".repeat(32)}`,
        },
      }),
      logger,
    );
    await checkFacilitator(
      resolveConfig({
        env: {},
        payment: { payTo: PAY_TO, network: "base", settler: recordingSettler() },
      }),
      logger,
    );
    expect(requests).toEqual([]);
    expect(logger.lines).toEqual([]);
  });
});

describe("startServer with a facilitator", () => {
  let server: Server | undefined;
  afterEach(async () => {
    await closeServer(server);
    server = undefined;
  });

  it("starts when the facilitator settles our network, after logging which kinds matched", async () => {
    answer = json(200, { kinds: TESTNET });
    const logger = captureLogger();
    server = await startServer(makeAgent(), {
      env: { PORT: "0", ...productionEnv("base-sepolia", url) },
      logger,
    });
    const messages = logger.lines.map((l) => l.message);
    const checked = messages.findIndex((m) => m.includes("facilitator settles"));
    const listening = messages.findIndex((m) => m.includes("listening"));
    expect(checked).toBeGreaterThanOrEqual(0);
    expect(listening).toBeGreaterThan(checked);
  });

  it("GET /health says degraded (503) while the facilitator does not answer, ok again once it does", async () => {
    answer = json(200, { kinds: TESTNET });
    server = await startServer(makeAgent(), {
      env: { PORT: "0", ...productionEnv("base-sepolia", url) },
      logger: captureLogger(),
    });
    answer = json(502, { error: "bad gateway" });
    const degraded = await healthOf(urlOf(server));
    expect(degraded.status).toBe(503);
    expect(degraded.body).toMatchObject({
      status: "degraded",
      problems: ["settlement route unreachable: paid jobs are refused until it is back"],
    });
    answer = json(200, { kinds: TESTNET });
    const healed = await healthUntil(urlOf(server), (status) => status === 200);
    expect(healed.status).toBe(200);
  });

  it("with two networks, GET /health names each one degraded while their facilitator does not answer", async () => {
    answer = json(200, { kinds: [...TESTNET, kind(2, "eip155:421614")] });
    const { X402_NETWORK: _one, ...env } = productionEnv("base-sepolia", url);
    server = await startServer(makeAgent(), {
      env: { PORT: "0", ...env, X402_NETWORKS: "base-sepolia,arbitrum-sepolia" },
      logger: captureLogger(),
    });
    expect((await healthOf(urlOf(server))).body).toMatchObject({
      status: "ok",
      networks: { "eip155:84532": { status: "ok" }, "eip155:421614": { status: "ok" } },
    });
    answer = json(502, { error: "bad gateway" });
    const down = {
      status: "degraded",
      problems: ["settlement route unreachable: paid jobs are refused until it is back"],
    };
    const degraded = await healthUntil(urlOf(server), (status) => status === 503);
    expect(degraded.body).toMatchObject({
      status: "degraded",
      problems: ["settlement route unreachable: paid jobs are refused until it is back"],
      networks: { "eip155:84532": down, "eip155:421614": down },
    });
  });

  it("refuses to start (stderr + exit 1, nothing listening) when it does not", async () => {
    answer = json(200, { kinds: TESTNET });
    const sigterm = process.listenerCount("SIGTERM");
    const stderr = await refusedStart(makeAgent(), { PORT: "0", ...productionEnv("base", url) });
    expect(stderr).toMatch(
      /^Invalid configuration:\n {2}- the x402 facilitator \(X402_FACILITATOR_URL\) at .* does not settle "exact" payments on the configured network, base \(eip155:8453\)\. It supports: x402 v2 exact on eip155:84532/,
    );
    expect(process.listenerCount("SIGTERM")).toBe(sigterm);
  });

  it("a facilitator that does not answer (down, 5xx) is a transient refusal: exit 75, not 1, saying so", async () => {
    const down = await refusedStart(
      makeAgent(),
      { PORT: "0", ...productionEnv("base-sepolia", closedUrl) },
      75,
    );
    expect(down).toMatch(/^Cannot start yet \(a transient failure: exit 75, try again later\):\n/);
    expect(down).toMatch(/unreachable \(ECONNREFUSED\)/);
    answer = json(503, { error: "starting" });
    const busy = await refusedStart(
      makeAgent(),
      { PORT: "0", ...productionEnv("base-sepolia", url) },
      75,
    );
    expect(busy).toMatch(/answered HTTP 503/);
    // A facilitator that answers but refuses the request is no transient failure: exit 1.
    answer = json(404, { error: "no such path" });
    const wrong = await refusedStart(makeAgent(), {
      PORT: "0",
      ...productionEnv("base-sepolia", url),
    });
    expect(wrong).toMatch(/^Invalid configuration:\n/);
  });
});
