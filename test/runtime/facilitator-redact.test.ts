// A facilitator that echoes the credentials it was sent, written so that text matching on its raw
// answer finds nothing: every character of invalidReason / errorReason as a JSON `\u` escape (as .NET's
// default encoder writes `+`: `\u002B`), the Basic credentials base64-encoded, the API key
// percent-encoded. None of the secrets (X402_FACILITATOR_HEADERS' API key, the password of the
// facilitator URL, its "user:pass" and their base64) reaches the buyer's 402 body, the PAYMENT-REQUIRED
// header or a log line: they are replaced after parsing, in every string, whatever the encoding.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { startServer } from "../../templates/runtime/server.js";
import {
  anvilAccount,
  captureLogger,
  job,
  makeAgent,
  offerV2,
  PAY_TO,
  post,
  signAuthorization,
  unb64,
  v2Header,
} from "./helpers.js";

const API_KEY = "k+ApiKey/7f3a9c2e";
const USER = "alice";
const PASSWORD = "pa+ss-w0rd-1234";
const BASIC = Buffer.from(`${USER}:${PASSWORD}`).toString("base64");

/** Every character as a JSON \u escape: no secret is visible in the raw text. */
const escaped = (text: string) =>
  [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");

/** What the facilitator answers to /verify and /settle: refuse verification, or fail settlement. */
let mode: "verify" | "settle" = "verify";
let facilitator: Server;
let facilitatorUrl: string;
let server: Server | undefined;

beforeAll(async () => {
  facilitator = createServer((req: IncomingMessage, res) => {
    req.resume();
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const json = (text: string) =>
      res.writeHead(200, { "content-type": "application/json" }).end(text);
    if (path.endsWith("/supported"))
      return json(
        JSON.stringify({
          kinds: [
            { x402Version: 2, scheme: "exact", network: "eip155:84532" },
            { x402Version: 1, scheme: "exact", network: "base-sepolia" },
          ],
        }),
      );
    const echo = `authorization=${req.headers.authorization} x-api-key=${String(req.headers["x-api-key"])}`;
    const message = `${encodeURIComponent(API_KEY)} ${Buffer.from(echo).toString("base64")} &#x2B;${escaped(PASSWORD)}`;
    if (path.endsWith("/verify") && mode === "verify")
      return json(
        `{"isValid":false,"invalidReason":"${escaped(echo)}","invalidMessage":"${message}"}`,
      );
    if (path.endsWith("/verify")) return json(`{"isValid":true,"payer":"${PAY_TO}"}`);
    return json(
      `{"success":false,"errorReason":"${escaped(echo)}","errorMessage":"${message}","transaction":"","network":"${escaped(API_KEY)}"}`,
    );
  });
  await new Promise<void>((r) => facilitator.listen(0, "127.0.0.1", r));
  const port = (facilitator.address() as AddressInfo).port;
  facilitatorUrl = `http://${USER}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/f`;
});
afterEach(async () => {
  if (server?.listening) {
    server.closeAllConnections();
    await new Promise((r) => server!.close(r));
  }
});
afterAll(async () => {
  facilitator.closeAllConnections();
  await new Promise((r) => facilitator.close(r));
});

async function paidAttempt() {
  const logger = captureLogger();
  server = await startServer(makeAgent(), {
    env: {
      PORT: "0",
      PAY_TO,
      X402_NETWORK: "base-sepolia",
      X402_FACILITATOR_URL: facilitatorUrl,
      X402_FACILITATOR_HEADERS: `X-API-Key: ${API_KEY}`,
    },
    logger,
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const payload = await signAuthorization(anvilAccount());
  const res = await post(url, job("echo", { text: "x" }), {
    "payment-signature": v2Header(offerV2(), payload),
  });
  const header = res.headers.get("payment-required");
  const everything = [
    res.text,
    header ? JSON.stringify(unb64(header)) : "",
    JSON.stringify(logger.lines),
  ].join("\n");
  return { res, everything };
}

const SECRETS = [API_KEY, PASSWORD, `${USER}:${PASSWORD}`, BASIC, encodeURIComponent(API_KEY)];

it.each(["verify", "settle"] as const)(
  "a facilitator echoing the credentials in \\u escapes, base64 and percent-encoding (%s): no secret reaches the 402 body, its PAYMENT-REQUIRED header or the log",
  async (which) => {
    mode = which;
    const { res, everything } = await paidAttempt();
    expect(res.status).not.toBe(200);
    for (const secret of SECRETS) expect(everything, secret).not.toContain(secret);
    // The echo arrived (the facilitator's reason is shown), with every secret replaced.
    expect(everything).toContain("[redacted]");
  },
);
