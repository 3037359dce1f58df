// A seller made of real x402 parts, for the Solana payers' tests (`create-agent call`, generated clients) until
// our own server takes Solana: @x402/core's x402ResourceServer (what @x402/express's paymentMiddleware runs)
// with @x402/svm's exact server scheme on solana:* (and @x402/evm's on eip155:*), settling through real
// facilitators over HTTP, on plain Node http at 127.0.0.1. It serves the /about our servers serve, declaring
// `echo` at 0.01 USDC; its 402 offers one `exact` option per network in the order given, at `askedUsd` (the
// declared price unless a test makes it hostile). Every job it runs is recorded with its deadline and payment.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { HTTPFacilitatorClient, x402ResourceServer } from "@x402/core/server";
import {
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
} from "@x402/core/http";
import type { Network, PaymentRequirements } from "@x402/core/types";
import { ExactSvmScheme } from "@x402/svm/exact/server";

export interface SellerOption {
  /** CAIP-2 network id. */
  network: string;
  payTo: string;
  /** The token, when it is not the network's default USDC (e.g. the local chain's). */
  asset?: string;
}

export interface SellerOptions {
  options: SellerOption[];
  /** Facilitator URLs: each network goes to the first whose /supported lists it. */
  facilitators: string[];
  /** What the 402 asks, in USD (default "0.01", the declared price). */
  askedUsd?: string;
  /** Hostile: the Solana offers name this account as the fee payer (instead of the facilitator's). */
  feePayer?: string;
  /** Hostile: the Solana offers' `amount` replaced by this raw JSON value (any type or number form). */
  solanaAmount?: unknown;
}

export interface Seller {
  url: string;
  /** Every POST /execute: its deadline (seconds from when it arrived) and payment header, if any. */
  requests: { deadlineIn: number; payment?: string }[];
  /** Settlements that succeeded, with the network. */
  settled: { network: string; transaction: string }[];
  close(): Promise<void>;
}

const DECLARED = "0.01";

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => resolve(body));
  });
}

export async function startSeller(config: SellerOptions): Promise<Seller> {
  const server = new x402ResourceServer(
    config.facilitators.map((url) => new HTTPFacilitatorClient({ url })),
  );
  server.register("solana:*" as Network, new ExactSvmScheme());
  server.register("eip155:*" as Network, new ExactEvmScheme());
  await server.initialize();
  const price = `$${config.askedUsd ?? DECLARED}`;
  const requests: Seller["requests"] = [];
  const settled: Seller["settled"] = [];

  const about = {
    service_version: "1.0",
    name: "solana-seller",
    capabilities: {
      echo: {
        pricing: { model: "per_job", amount: DECLARED, currency: "USDC" },
        input_schema: { message: { type: "string", required: true } },
        output_schema: { text: { type: "string" } },
      },
    },
  };

  async function requirements(): Promise<PaymentRequirements[]> {
    const all: PaymentRequirements[] = [];
    for (const option of config.options) {
      const built = await server.buildPaymentRequirements({
        scheme: "exact",
        network: option.network as Network,
        payTo: option.payTo,
        price: option.asset
          ? {
              amount: String(Math.round(Number(config.askedUsd ?? DECLARED) * 1e6)),
              asset: option.asset,
              extra: { name: "USDC", version: "2" },
            }
          : price,
        maxTimeoutSeconds: 60,
      });
      for (const requirement of built)
        if (option.network.startsWith("solana:")) {
          if (config.feePayer)
            requirement.extra = { ...requirement.extra, feePayer: config.feePayer };
          if ("solanaAmount" in config)
            (requirement as { amount: unknown }).amount = config.solanaAmount;
        }
      all.push(...built);
    }
    return all;
  }

  const http = createServer(async (req, res) => {
    const body = await readBody(req);
    const path = (req.url ?? "/").split("?")[0];
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(value));
    };
    if (req.method === "GET" && path === "/about") return json(200, about);
    if (req.method !== "POST" || path !== "/execute") return json(404, {});
    let job: { job_id?: string; deadline?: number; task?: { input?: { message?: string } } };
    try {
      job = JSON.parse(body);
    } catch {
      return json(400, { error_type: "validation", error: "not JSON" });
    }
    const header = req.headers["payment-signature"];
    const payment = typeof header === "string" ? header : undefined;
    requests.push({
      deadlineIn: (job.deadline ?? 0) - Math.floor(Date.now() / 1000),
      ...(payment ? { payment } : {}),
    });
    const offered = await requirements();
    const resource = {
      url: `http://${req.headers.host}/execute`,
      description: "echo",
      mimeType: "application/json",
    };
    if (!payment) {
      const required = await server.createPaymentRequiredResponse(offered, resource);
      return json(402, {}, { "payment-required": encodePaymentRequiredHeader(required) });
    }
    const decoded = decodePaymentSignatureHeader(payment);
    const matched = server.findMatchingRequirements(offered, decoded);
    if (!matched) return json(402, { error_type: "payment", error: "no matching offer" });
    const verified = await server.verifyPayment(decoded, matched);
    if (!verified.isValid)
      return json(402, { error_type: "payment", error: `invalid: ${verified.invalidReason}` });
    const settlement = await server.settlePayment(decoded, matched);
    if (!settlement.success)
      return json(402, { error_type: "payment", error: `not settled: ${settlement.errorReason}` });
    settled.push({ network: settlement.network, transaction: settlement.transaction });
    return json(
      200,
      {
        job_id: job.job_id,
        status: "completed",
        output: { text: job.task?.input?.message ?? "" },
        completed_at: Math.floor(Date.now() / 1000),
      },
      { "payment-response": encodePaymentResponseHeader(settlement) },
    );
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    requests,
    settled,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** Sellers a test starts on the networks it names, each paid to `payTo(network)`; close() stops them all. */
export interface SellerPool {
  /** A seller offering `networks` in this order, at `askedUsd` (the declared price by default). */
  start(networks: string[], askedUsd?: string): Promise<Seller>;
  /** Starts a seller with options of its own (e.g. a hostile fee payer), closed with the others. */
  startWith(config: SellerOptions): Promise<Seller>;
  close(): Promise<void>;
}

export function sellerPool(
  facilitators: () => string[],
  payTo: (network: string) => string,
): SellerPool {
  const started: Seller[] = [];
  const startWith = async (config: SellerOptions) => {
    const seller = await startSeller(config);
    started.push(seller);
    return seller;
  };
  return {
    start: (networks, askedUsd) =>
      startWith({
        options: networks.map((network) => ({ network, payTo: payTo(network) })),
        facilitators: facilitators(),
        ...(askedUsd ? { askedUsd } : {}),
      }),
    startWith,
    close: async () => {
      await Promise.all(started.map((s) => s.close()));
    },
  };
}
