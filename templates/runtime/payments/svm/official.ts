/**
 * The official Solana verification and settlement behind a Solana network (svm/scheme.ts), on the
 * route the configuration chose:
 *   - facilitator: the first x402 facilitator whose /supported lists the network (its fee payer);
 *   - direct: @x402/svm's facilitator-side exact scheme in this process (x402 v1: ExactSvmSchemeV1,
 *     where v1 names the network) over this server's fee payer (SOLANA_FEE_PAYER_KEY) and the
 *     network's RPC; the v2 scheme is also given the compute-budget caps (v1's takes no options: the
 *     gate checks both versions' transactions against the caps itself, svm/transaction.ts). A
 *     settlement not confirmed within X402_SETTLE_TIMEOUT_SECONDS, or that failed unexpectedly, is
 *     uncertain and names its transaction: the fee payer's signature, which is the transaction's
 *     (ed25519 signs deterministically, so it is the one the sent transaction carries); so is one
 *     x402 v1's scheme could not send or confirm (it does not say which).
 * Part of your project: edit freely.
 */
import { createPrivateKey, sign } from "node:crypto";
import { PaymentError } from "../../errors.js";
import type { SolanaNetworkPaymentConfig, SolanaSettlementRoute } from "./config.js";
import type { SolanaPayment } from "./payment.js";
import type { FacilitatorClient } from "../facilitator.js";
import { request } from "../json-rpc.js";
import { v1Knows } from "../networks.js";
import { SettlementError } from "../settlement.js";
import { refuse } from "./checks.js";
import { base58Encode } from "./keys.js";
import {
  loadSolanaKit,
  loadX402Svm,
  loadX402SvmFacilitator,
  loadX402SvmFacilitatorV1,
  type SvmFacilitatorScheme,
  type SvmPaymentPayload,
  type SvmRequirements,
  type SvmSettleResponse,
  type SvmVerifyResponse,
} from "./solana.js";
import type { ComputeBudgetCaps } from "./transaction.js";

const MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";

/** What a settlement answered (the transaction may be absent). */
export type SettleAnswer = Omit<SvmSettleResponse, "transaction" | "network"> & {
  transaction?: string;
};

export interface OfficialSide {
  /** The fee payer named in offers; undefined until a facilitator's /supported named it. */
  feePayer(): string | undefined;
  /** The official verification's answer; throws PaymentError when there was none. */
  verify(p: SolanaPayment): Promise<SvmVerifyResponse>;
  /** The settlement's answer; throws SettlementError when there was none (uncertain when it may have gone through). */
  settle(p: SolanaPayment): Promise<SettleAnswer>;
}

const forScheme = (p: SolanaPayment) =>
  [p.payload as unknown as SvmPaymentPayload, p.requirement as unknown as SvmRequirements] as const;

const unverifiable = (err: unknown, code: string): PaymentError =>
  new PaymentError(
    `payment could not be verified, so the job was not run: ${err instanceof Error ? err.message : String(err)}; try again later`,
    { cause: err, code },
  );

/** Direct route: the official schemes over this server's fee payer, loaded once (off the request path). */
export function directSide(
  net: SolanaNetworkPaymentConfig,
  route: Extract<SolanaSettlementRoute, { kind: "direct" }>,
  caps: ComputeBudgetCaps,
  settleTimeoutSeconds: number,
): OfficialSide {
  const { network } = net;
  const schemes = (async () => {
    const [x402, scheme, schemeV1, kit] = await Promise.all([
      loadX402Svm(),
      loadX402SvmFacilitator(),
      v1Knows(network) ? loadX402SvmFacilitatorV1() : undefined,
      loadSolanaKit(),
    ]);
    const signer = await kit.createKeyPairSignerFromBytes(route.feePayerKey);
    // Credentials in the URL go as Basic authorization: fetch refuses a URL that holds them,
    // with the whole URL in its message.
    const { target, headers } = request(route.rpcUrl);
    const url = network.caip2 === MAINNET ? kit.mainnet(target.href) : kit.devnet(target.href);
    const rpc = headers.authorization
      ? kit.createSolanaRpc(url, { headers: { authorization: headers.authorization } })
      : kit.createSolanaRpc(url);
    // x402 v1 names the network "solana-devnet": the signer knows the RPC by both names.
    const signerOverRpc = x402.toFacilitatorSvmSigner(signer, {
      [network.caip2]: rpc,
      [network.v1Name]: rpc,
    });
    return {
      2: new scheme.ExactSvmScheme(signerOverRpc, undefined, caps),
      1: schemeV1 && new schemeV1.ExactSvmSchemeV1(signerOverRpc),
    } as Record<1 | 2, SvmFacilitatorScheme | undefined>;
  })();
  schemes.catch(() => undefined);
  const schemeFor = async (p: SolanaPayment): Promise<SvmFacilitatorScheme> => {
    const scheme = (await schemes)[p.x402Version];
    if (!scheme) throw new Error(`no x402 v${p.x402Version} scheme for ${network.caip2}`);
    return scheme;
  };
  return {
    feePayer: () => route.feePayer,
    async verify(p) {
      try {
        return await (await schemeFor(p)).verify(...forScheme(p));
      } catch (err) {
        throw unverifiable(err, "verification_unavailable");
      }
    },
    async settle(p) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`not confirmed within ${settleTimeoutSeconds} s`)),
          settleTimeoutSeconds * 1000,
        );
      });
      try {
        const answer = await Promise.race([
          (async () => (await schemeFor(p)).settle(...forScheme(p)))(),
          late,
        ]);
        // x402 v1's scheme answers a transaction it sent but could not confirm as it answers one it
        // could not send: "transaction_failed", no signature. It may land: unconfirmed, named.
        if (answer.success || answer.transaction || answer.errorReason !== "transaction_failed")
          return answer;
        const signature = await feePayerSignature(p.transaction, route.feePayerKey);
        return { ...answer, errorReason: "settlement_pending", transaction: signature ?? "" };
      } catch (err) {
        const signature = await feePayerSignature(p.transaction, route.feePayerKey);
        throw new SettlementError(
          `settlement on ${network.caip2} failed unexpectedly: ${err instanceof Error ? err.message : String(err)}; the payment may or may not have been settled (transaction ${signature ?? "unknown"})`,
          { uncertain: true, cause: err, ...(signature && { broadcastTx: signature }) },
        );
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * The signature this fee payer gives the transaction (base64, as paid), which is its first, i.e.
 * the transaction's; undefined when it does not decode.
 */
async function feePayerSignature(
  transaction: string,
  secretKey: Uint8Array,
): Promise<string | undefined> {
  try {
    const { messageBytes } = (await loadSolanaKit())
      .getTransactionDecoder()
      .decode(Buffer.from(transaction, "base64"));
    // PKCS#8 of an ed25519 key: a fixed prefix, then the 32-byte seed.
    const der = Buffer.concat([
      Buffer.from("302e020100300506032b657004220420", "hex"),
      Buffer.from(secretKey.subarray(0, 32)),
    ]);
    const key = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
    return base58Encode(sign(null, Uint8Array.from(messageBytes), key));
  } catch {
    return undefined;
  }
}

/** Facilitator route: the router's facilitator for each x402 version (its fee payer, once known). */
export function facilitatorSide(
  net: SolanaNetworkPaymentConfig,
  route: Extract<SolanaSettlementRoute, { kind: "facilitator" }>,
  settleTimeoutSeconds: number,
): OfficialSide {
  const { network } = net;
  let feePayer: string | undefined;
  // Startup's route check asks the facilitators before the server listens.
  const side = import("../facilitator-router.js").then(async (r) => {
    const router = r.routerFor(route, settleTimeoutSeconds * 1000);
    await router.initialize();
    const payer = router.kindFor(2, network, "exact")?.extra?.feePayer;
    if (typeof payer === "string") feePayer = payer;
    return {
      2: router.clientFor(2, network, "exact"),
      1: v1Knows(network) ? router.clientFor(1, network, "exact") : undefined,
    } as Record<1 | 2, FacilitatorClient | undefined>;
  });
  side.catch(() => undefined);
  /** The facilitator for this x402 version; refuses the payment when there is none. */
  async function client(x402Version: 1 | 2): Promise<FacilitatorClient> {
    let clients: Record<1 | 2, FacilitatorClient | undefined>;
    try {
      clients = await side;
    } catch (err) {
      throw unverifiable(err, "facilitator_unavailable");
    }
    const found = clients[x402Version];
    if (found) return found;
    throw refuse(
      "facilitator_refused",
      `no configured x402 facilitator settles x402 v${x402Version} "exact" payments on ${network.caip2} (${network.v1Name}), so the job was not run`,
    );
  }
  return {
    feePayer: () => feePayer,
    async verify(p) {
      const facilitator = await client(p.x402Version);
      try {
        return await facilitator.verify(p);
      } catch (err) {
        throw unverifiable(err, "facilitator_unavailable");
      }
    },
    async settle(p) {
      let facilitator: FacilitatorClient;
      try {
        facilitator = await client(p.x402Version);
      } catch (err) {
        throw new SettlementError(err instanceof Error ? err.message : String(err), {
          cause: err,
          advice: NOT_SENT,
        });
      }
      try {
        return await facilitator.settle(p);
      } catch (err) {
        const uncertain = (err as { uncertain?: boolean }).uncertain === true;
        throw new SettlementError(
          `${err instanceof Error ? err.message : String(err)}${uncertain ? "; the payment may or may not have been settled" : ""}`,
          { uncertain, cause: err, advice: NOT_SENT },
        );
      }
    },
  };
}

/** Nothing was sent to Solana: the same transaction can land later, while its blockhash is valid. */
const NOT_SENT =
  "The transaction was not sent to Solana: the same payment may be sent again while its blockhash is valid (about a minute after the payer fetched it); after that, sign a new transaction.";
