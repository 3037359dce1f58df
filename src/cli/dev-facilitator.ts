/**
 * The x402 facilitator of `create-agent dev --paid` in a project without the `onchain` feature (whose
 * server cannot settle on a chain itself): the official reference facilitator (@x402/core's
 * x402Facilitator with @x402/evm's "exact" scheme) settling with anvil's settler account on the local
 * chain only, served on 127.0.0.1 (a free port) inside the dev:paid process, which stops it. The server
 * settles through it (X402_FACILITATOR_URL) as it would through a real one.
 *
 * Its packages come from the project's node_modules (devDependencies of every project), typed by the small
 * shapes below (test/cli/dev-paid.test.ts checks the real packages fit them): create-agent's light install
 * needs none of them. Nothing here can reach a real network: its one RPC URL must be loopback.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { callerDependencies, dependencies } from "../versions.js";
import { assertLoopback, DEV_CHAIN_ID, type Untyped } from "./dev-chain.js";
import { hasFeatureRecord } from "../features.js";
import { isObject } from "../json-object.js";
import { CliError } from "./errors.js";

/** The feature whose server settles on the chain itself (X402_RPC_URL + X402_SETTLER_KEY). */
export const ONCHAIN = "onchain";

/**
 * Whether the project (its package.json) has the `onchain` feature: its record lists it, or it has no
 * record (0.1.0 and 0.2.0 projects have every feature of their time, on-chain settlement among them).
 * Read from the record itself: recordedFeatures() keeps only the names create-agent's table knows.
 */
export function hasOnchain(pkg: unknown): boolean {
  if (!hasFeatureRecord(pkg)) return true;
  return (pkg as { createAgent: { features: unknown[] } }).createAgent.features.includes(ONCHAIN);
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

/** The version each package is installed at: @x402/core is released with @x402/evm, at its version. */
const VERSIONS: Record<string, string> = {
  "@x402/core": callerDependencies["@x402/evm"],
  "@x402/evm": callerDependencies["@x402/evm"],
  viem: dependencies.viem,
};

/** "@x402/evm/exact/facilitator" -> "@x402/evm", "viem/accounts" -> "viem". */
const packageOf = (specifier: string) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

/** The facilitator's packages from the project at `root`, or a CliError naming the command that installs them. */
export async function loadFacilitator(root: string): Promise<FacilitatorModules> {
  const from = createRequire(join(root, "package.json"));
  const loaded: Partial<Record<keyof FacilitatorModules, unknown>> = {};
  const missing = new Set<string>();
  for (const [key, specifier] of Object.entries(SPECIFIERS) as Array<
    [keyof FacilitatorModules, string]
  >) {
    let path: string;
    try {
      path = from.resolve(specifier);
    } catch {
      missing.add(packageOf(specifier));
      continue;
    }
    try {
      loaded[key] = await import(pathToFileURL(path).href);
    } catch (error) {
      throw new CliError(
        `dev:paid: ${specifier} in ${root} cannot be loaded (${(error as Error).message})`,
      );
    }
  }
  if (missing.size > 0) throw new CliError(missingMessage(root, [...missing]));
  return loaded as FacilitatorModules;
}

/** Which packages are missing, and `npm install` when package.json lists them all, else the exact command. */
function missingMessage(root: string, missing: string[]): string {
  let listed: Record<string, unknown> = {};
  try {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<
      string,
      unknown
    >;
    listed = { ...(pkg.dependencies as object), ...(pkg.devDependencies as object) };
  } catch {
    // no readable package.json: name every package
  }
  const command = missing.every((name) => name in listed)
    ? "npm install"
    : `npm install --save-dev ${missing.map((name) => `${name}@${VERSIONS[name]}`).join(" ")}`;
  return (
    `dev:paid settles through the official x402 facilitator run on this machine (this project has no ${ONCHAIN} feature), ` +
    `which needs ${missing.join(", ")} from the project's node_modules: not installed, so nothing was started. ` +
    `Run in ${root}:\n  ${command}\n(or \`npm run add -- ${ONCHAIN}\` to have the server settle on the local chain itself)`
  );
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
