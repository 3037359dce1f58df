// A real x402 facilitator (the reference @x402/core + @x402/evm "exact" scheme) served over HTTP for tests.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { x402Facilitator } from "@x402/core/facilitator";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { createPublicClient, createWalletClient, http, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { closeServer, listenLocal } from "../runtime/servers.js";
import { localChain } from "./anvil.js";

export interface Facilitator {
  url: string;
  stop(): Promise<void>;
}

/**
 * v2 payments verify and settle on `eip155:<chainId>` (84532 by default). registerExactEvmScheme also registers
 * the v1 scheme for every v1 network name it knows, "base-sepolia" among them; v1 maps that name to chain id 84532,
 * so on an 84532 anvil v1 payments settle locally too.
 */
export async function startFacilitator(
  rpcUrl: string,
  privateKey: `0x${string}`,
): Promise<Facilitator> {
  return serveFacilitator(await registerEvm(new x402Facilitator(), rpcUrl, privateKey));
}

/** Registers the reference EVM "exact" scheme for the chain at rpcUrl (its id read from it) on a facilitator. */
export async function registerEvm(
  facilitator: x402Facilitator,
  rpcUrl: string,
  privateKey: `0x${string}`,
): Promise<x402Facilitator> {
  const chainId = await createPublicClient({ transport: http(rpcUrl) }).getChainId();
  const client = createWalletClient({
    account: privateKeyToAccount(privateKey),
    chain: localChain(rpcUrl, chainId),
    transport: http(rpcUrl),
    pollingInterval: 20, // anvil automines; viem's default 4 s interval would slow every settlement
  }).extend(publicActions);
  return registerExactEvmScheme(facilitator, {
    // viem 2.57's verifyTypedData parameter type is a union (blockHash/blockNumber variants) that x402's narrower
    // signer type does not fit; the call itself is the same, so only the parameter type is adapted.
    signer: toFacilitatorEvmSigner({
      ...client,
      address: client.account.address,
      verifyTypedData: (args) =>
        client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
    }),
    networks: `eip155:${chainId}`,
  });
}

/** Serves a facilitator over HTTP on 127.0.0.1: GET /supported, POST /verify, POST /settle. */
export async function serveFacilitator(facilitator: x402Facilitator): Promise<Facilitator> {
  const server = createServer((req, res) => {
    handle(facilitator, req, res).catch((error: unknown) =>
      send(res, 500, { error: String(error) }),
    );
  });
  return { url: await listenLocal(server), stop: () => closeServer(server) };
}

async function handle(facilitator: x402Facilitator, req: IncomingMessage, res: ServerResponse) {
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  if (req.method === "GET" && path === "/supported")
    return send(res, 200, facilitator.getSupported());
  if (req.method !== "POST" || (path !== "/verify" && path !== "/settle")) {
    return send(res, 404, { error: `no route ${req.method} ${path}` });
  }

  let body: unknown;
  try {
    body = JSON.parse(await readBody(req));
  } catch {
    return send(res, 400, { error: "request body is not valid JSON" });
  }
  const { paymentPayload, paymentRequirements } = (body ?? {}) as {
    paymentPayload?: PaymentPayload;
    paymentRequirements?: PaymentRequirements;
  };
  if (!isObject(paymentPayload) || !isObject(paymentRequirements)) {
    return send(res, 400, { error: "expected {x402Version, paymentPayload, paymentRequirements}" });
  }
  // Invalid payments come back as results ({isValid:false} / {success:false}) with status 200, as the reference
  // facilitator does; only unexpected errors (e.g. an unregistered network) are thrown and become a 500.
  const result =
    path === "/verify"
      ? await facilitator.verify(paymentPayload, paymentRequirements)
      : await facilitator.settle(paymentPayload, paymentRequirements);
  return send(res, 200, result);
}

function isObject(value: unknown): value is object {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function send(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body, (_key, value: unknown) =>
    typeof value === "bigint" ? value.toString() : value,
  );
  res.writeHead(status, { "content-type": "application/json" }).end(text);
}
