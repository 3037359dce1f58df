// The startup check of the facilitator route against the REAL reference facilitator (the one the
// chain setup runs: exact on eip155:84532 for x402 v2, and every v1 network name it knows):
// base-sepolia starts; base (mainnet) and an unreachable facilitator are refused (exit 1).
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { ConfigError, resolveConfig } from "../../templates/runtime/config.js";
import { checkFacilitator, fetchSupported } from "../../templates/runtime/payments/facilitator.js";
import { startServer } from "../../templates/runtime/server.js";
import { captureLogger, makeAgent } from "../runtime/helpers.js";
import { refusedStart } from "../runtime/refused-start.js";
import { closedUrl as unusedUrl, closeServer } from "../runtime/servers.js";
import { PAYEE } from "./accounts.js";
import { rejectionOf } from "../thrown.js";

const { asset, facilitatorUrl } = inject("chain");

const env = (network: string, facilitator = facilitatorUrl) => ({
  PAY_TO: PAYEE,
  X402_NETWORK: network,
  ...(network === "base-sepolia" ? { X402_ASSET: asset } : {}),
  X402_FACILITATOR_URL: facilitator,
});

/** A local port nothing listens on. */
let closedUrl: string;
beforeAll(async () => {
  closedUrl = await unusedUrl();
});

const configError = (promise: Promise<unknown>) => rejectionOf(ConfigError, promise);

describe("checkFacilitator against the reference facilitator", () => {
  it("its /supported lists v2 eip155:84532 and, for v1, every name it knows (mainnet base among them)", async () => {
    const kinds = await fetchSupported(facilitatorUrl, 5000);
    expect(kinds).toContainEqual({ x402Version: 2, scheme: "exact", network: "eip155:84532" });
    expect(kinds).toContainEqual({ x402Version: 1, scheme: "exact", network: "base-sepolia" });
    // Why a v1 entry alone is no proof: it lists mainnet base for v1 with a signer on chain 84532.
    expect(kinds).toContainEqual({ x402Version: 1, scheme: "exact", network: "base" });
    expect(kinds).not.toContainEqual(expect.objectContaining({ network: "eip155:8453" }));
  });

  it("base-sepolia passes, logging the kinds that matched", async () => {
    const logger = captureLogger();
    await checkFacilitator(resolveConfig({ env: env("base-sepolia") }), logger);
    expect(logger.lines).toEqual([
      {
        level: "info",
        message: 'the x402 facilitator settles "exact" payments on base-sepolia (eip155:84532)',
        fields: {
          facilitator: `${facilitatorUrl}/`,
          kinds: ["x402 v2 exact on eip155:84532", "x402 v1 exact on base-sepolia"],
        },
      },
    ]);
  });

  it("base (mainnet) is refused, naming what it supports and what to configure", async () => {
    const err = await configError(
      checkFacilitator(resolveConfig({ env: env("base") }), captureLogger()),
    );
    expect(err.problems).toHaveLength(1);
    const problem = err.problems[0]!;
    expect(problem).toMatch(
      new RegExp(
        `^the x402 facilitator \\(X402_FACILITATOR_URL\\) at ${facilitatorUrl}/ lists "exact" payments on the configured network, base \\(eip155:8453\\), only for x402 v1, not among its x402 v2 kinds`,
      ),
    );
    expect(problem).toMatch(
      /It supports: x402 v2 exact on eip155:84532; x402 v1 exact on .*base-sepolia/,
    );
    expect(problem).toMatch(
      /To fix it, set X402_FACILITATOR_URL to a facilitator that settles "exact" payments on base \(eip155:8453\), or settle directly from this server: X402_RPC_URL and X402_SETTLER_KEY/,
    );
  });

  it("an unreachable facilitator is refused", async () => {
    const err = await configError(
      checkFacilitator(resolveConfig({ env: env("base-sepolia", closedUrl) }), captureLogger()),
    );
    expect(err.message).toMatch(
      /could not ask the x402 facilitator .* unreachable \(ECONNREFUSED\)\. The server does not start/,
    );
  });
});

describe("startServer against the reference facilitator", () => {
  let server: Server | undefined;
  afterEach(async () => {
    await closeServer(server);
    server = undefined;
  });

  /** startServer refusing `network` (exit 1 before listening): what it wrote to stderr. */
  const refusal = (network: string, facilitator?: string, exitCode = 1) =>
    refusedStart(makeAgent(), { PORT: "0", ...env(network, facilitator) }, exitCode);

  it("X402_NETWORK=base-sepolia starts and serves", async () => {
    const logger = captureLogger();
    server = await startServer(makeAgent(), { env: { PORT: "0", ...env("base-sepolia") }, logger });
    const { port } = server.address() as AddressInfo;
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    expect(logger.lines.map((l) => l.message)).toContain(
      'the x402 facilitator settles "exact" payments on base-sepolia (eip155:84532)',
    );
  });

  it("X402_NETWORK=base (mainnet) is refused: stderr names what the facilitator supports, exit 1", async () => {
    const stderr = await refusal("base");
    expect(stderr).toMatch(/^Invalid configuration:\n {2}- the x402 facilitator/);
    expect(stderr).toMatch(/base \(eip155:8453\)/);
    expect(stderr).toMatch(/It supports: x402 v2 exact on eip155:84532/);
    expect(stderr).toMatch(/X402_RPC_URL and X402_SETTLER_KEY/);
  });

  it("an unreachable facilitator (a closed port) is refused, exit 75 (transient)", async () => {
    const stderr = await refusal("base-sepolia", closedUrl, 75);
    expect(stderr).toMatch(
      new RegExp(
        `could not ask the x402 facilitator \\(X402_FACILITATOR_URL\\) at ${closedUrl}/ which networks it settles: .*unreachable \\(ECONNREFUSED\\)`,
      ),
    );
  });
});
