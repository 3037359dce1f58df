/**
 * The x402 facilitator of `create-agent dev --paid` in a project without the `onchain` feature (whose
 * server cannot settle on a chain itself): the official reference facilitator (@x402/core's
 * x402Facilitator with @x402/evm's "exact" scheme) settling with anvil's settler account on the local
 * chain only, served on 127.0.0.1 (a free port) inside the dev:paid process, which stops it. The server
 * settles through it (X402_FACILITATOR_URL) as it would through a real one.
 *
 * Its packages are the x402 client's (installed on first use beside it, ../first-use.ts), typed by the
 * small shapes below (test/cli/dev-paid.test.ts checks the real packages fit them): neither
 * create-agent's light install nor a project needs them. Nothing here can reach a real network: its one
 * RPC URL must be loopback.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { X402_FIRST_USE } from "../caller/payment.js";
import { projectFeatures } from "../features.js";
import { importOnFirstUse, type Importer, toolRoot } from "../first-use.js";
import { assertLoopback, DEV_CHAIN_ID, type Untyped } from "./dev-chain.js";
import { isObject } from "../json-object.js";
import { CliError } from "./errors.js";
import { shellQuote } from "../shell-quote.js";

/** The feature whose server settles on the chain itself (X402_RPC_URL + X402_SETTLER_KEY). */
export const ONCHAIN = "onchain";

/**
 * Whether the project has the `onchain` feature (its server settles on the chain itself): its record
 * lists it, it has no record (0.1.0 and 0.2.0 projects have every feature of their time), or it still
 * carries the core files the feature came from (`carries`: whether a project path exists).
 */
export function hasOnchain(
  pkg: unknown,
  carries: (path: string) => boolean = () => false,
): boolean {
  return projectFeatures(pkg, carries).includes(ONCHAIN);
}

/** What dev:paid uses of the reference facilitator's packages (a result is passed on as JSON). */
export interface ReferenceFacilitator {
  verify(payload: object, requirements: object): Promise<unknown>;
  settle(payload: object, requirements: object): Promise<unknown>;
  getSupported(): unknown;
}

export interface FacilitatorModules {
  core: { x402Facilitator: new () => ReferenceFacilitator };
  evm: { toFacilitatorEvmSigner(client: Untyped): unknown };
  exact: {
    registerExactEvmScheme(
      facilitator: ReferenceFacilitator,
      config: { signer: unknown; networks: string | string[] },
    ): unknown;
  };
  /** viem (createWalletClient, http, publicActions, defineChain), untyped as in dev-usdc.ts. */
  viem: Untyped;
  accounts: { privateKeyToAccount(key: `0x${string}`): { address: `0x${string}` } };
}

const SPECIFIERS: Record<keyof FacilitatorModules, string> = {
  core: "@x402/core/facilitator",
  evm: "@x402/evm",
  exact: "@x402/evm/exact/facilitator",
  viem: "viem",
  accounts: "viem/accounts",
};

/**
 * The facilitator's packages (with `own` when given, else create-agent's resolution, else installed
 * on first use), or a CliError naming the command that installs them. Nothing is started before.
 */
export async function loadFacilitator(
  own?: Importer,
  install = X402_FIRST_USE,
): Promise<FacilitatorModules> {
  const keys = Object.keys(SPECIFIERS) as Array<keyof FacilitatorModules>;
  try {
    const modules = await importOnFirstUse(
      keys.map((key) => SPECIFIERS[key]),
      install,
      own,
    );
    return Object.fromEntries(
      keys.map((key, i) => [key, modules[i]]),
    ) as unknown as FacilitatorModules;
  } catch (error) {
    throw new CliError(
      `dev:paid settles through the official x402 facilitator run on this machine (this project has no ${ONCHAIN} feature), ` +
        `and its packages (${install.specs.join(", ")}) could not be loaded or installed (${(error as Error).message}), so nothing was started. ` +
        `Install them in the create-agent folder:\n  cd ${shellQuote(toolRoot())} && npm install --no-save ${install.specs.join(" ")}\n` +
        `(or \`npm run add -- ${ONCHAIN}\` to have the server settle on the local chain itself)`,
    );
  }
}

export interface DevFacilitator {
  /** Its base URL on 127.0.0.1 (GET /supported, POST /verify, POST /settle). */
  url: string;
  /** Closes it (its open connections first). */
  stop(): Promise<void>;
}

/**
 * The reference facilitator for the local chain at `rpcUrl` (loopback only), settling with `settlerKey`
 * (it pays the gas), served on 127.0.0.1 at a free port.
 */
export async function startDevFacilitator(
  m: FacilitatorModules,
  rpcUrl: string,
  settlerKey: `0x${string}`,
): Promise<DevFacilitator> {
  assertLoopback(rpcUrl);
  const chain = m.viem.defineChain({
    id: DEV_CHAIN_ID,
    name: "Local chain (dev:paid)",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const client = m.viem
    .createWalletClient({
      account: m.accounts.privateKeyToAccount(settlerKey),
      chain,
      transport: m.viem.http(rpcUrl),
      pollingInterval: 20, // anvil mines each transaction at once: no 4 s wait per settlement
    })
    .extend(m.viem.publicActions);
  const facilitator = new m.core.x402Facilitator();
  m.exact.registerExactEvmScheme(facilitator, {
    signer: m.evm.toFacilitatorEvmSigner({ ...client, address: client.account.address }),
    networks: `eip155:${DEV_CHAIN_ID}`,
  });
  return serveFacilitator(facilitator);
}

/**
 * A facilitator served over HTTP on 127.0.0.1 at a free port: GET /supported, POST /verify,
 * POST /settle (the repo's tests serve theirs with it too).
 */
export async function serveFacilitator(facilitator: ReferenceFacilitator): Promise<DevFacilitator> {
  const server = createServer((req, res) => {
    handle(facilitator, req, res).catch((error: unknown) =>
      send(res, 500, { error: String(error) }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const stop = async () => {
    if (!server.listening) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stop };
}

/** GET /supported, POST /verify and POST /settle, as the reference facilitator's HTTP server answers them. */
async function handle(
  facilitator: ReferenceFacilitator,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const path = new URL(req.url ?? "/", "http://localhost").pathname.replace(/\/+$/, "");
  if (req.method === "GET" && path === "/supported")
    return send(res, 200, facilitator.getSupported());
  if (req.method !== "POST" || (path !== "/verify" && path !== "/settle"))
    return send(res, 404, { error: `no route ${req.method} ${path}` });
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let body: { paymentPayload?: unknown; paymentRequirements?: unknown };
  try {
    body = (JSON.parse(Buffer.concat(chunks).toString("utf8")) ?? {}) as typeof body;
  } catch {
    return send(res, 400, { error: "request body is not valid JSON" });
  }
  const { paymentPayload, paymentRequirements } = body;
  if (!isObject(paymentPayload) || !isObject(paymentRequirements))
    return send(res, 400, { error: "expected {x402Version, paymentPayload, paymentRequirements}" });
  // An invalid payment is a result ({isValid:false} / {success:false}, status 200), as the reference
  // facilitator answers; only an unexpected error (an unregistered network) is a 500.
  const result =
    path === "/verify"
      ? await facilitator.verify(paymentPayload, paymentRequirements)
      : await facilitator.settle(paymentPayload, paymentRequirements);
  return send(res, 200, result);
}

function send(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body, (_key, value: unknown) =>
    typeof value === "bigint" ? value.toString() : value,
  );
  res.writeHead(status, { "content-type": "application/json" }).end(text);
}
