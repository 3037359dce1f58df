/**
 * The Solana family: USDC (an SPL token) on one Solana network, "exact" scheme, verified and settled
 * by the official @x402/svm code (no transaction is parsed here).
 *   offer()   - the network's mint, the payee (PAY_TO_SOLANA), the price, and `extra.feePayer`: the
 *               account that pays the fees and co-signs (the facilitator's, from its /supported; or
 *               this server's own, SOLANA_FEE_PAYER_KEY).
 *   verify()  - what the offer fixes: the requirement an x402 v2 client accepted (v1 clients, on
 *               `solana` and `solana-devnet`, name only scheme and network), the deadline rule
 *               (below), and a transaction @x402/svm can decode; the replay key is its message,
 *               whichever x402 version carried it.
 *   confirm() - the official verification (instructions, amount, mint, payee, fee payer,
 *               simulation) for the payment's x402 version: the facilitator's /verify, or
 *               @x402/svm's facilitator-side scheme (v1: ExactSvmSchemeV1) in this process (direct route).
 *   settle()  - the facilitator's /settle, or the same scheme's settle: co-sign, send, confirm.
 * A Solana transaction dies with its blockhash (about 60-90 s after the client fetched it), and it
 * is settled only after the job, so Solana pays only for jobs due soon (SOLANA_PAYMENT_LIFE_SECONDS).
 * Part of your project: edit freely.
 */
import { PaymentError } from "../../errors.js";
import type { SolanaNetworkPaymentConfig, SolanaSettlementRoute } from "../../ops/config.js";
import { redactUrl } from "../../ops/redact.js";
import { request } from "../json-rpc.js";
import type { Capability, PaidPayment, SolanaPayment } from "../../types.js";
import type { FacilitatorClient } from "../facilitator.js";
import type { PaymentGateDeps } from "../gate.js";
import type { NetworkScheme, Receipt } from "../scheme.js";
import { SETTLEMENT_MARGIN_SECONDS, SettlementError } from "../settlement.js";
import { SOLANA_PAYMENT_LIFE_SECONDS, solanaDeadlineProblem } from "./life.js";
import type { SentPayment } from "../verify.js";
import { v1Knows } from "../networks.js";
import {
  decodeBase64Json,
  MAX_PAYMENT_HEADER_BYTES,
  type PaymentOffer,
  requirementV1,
  requirementV2,
} from "../x402.js";
import {
  loadSolanaKit,
  loadX402Svm,
  loadX402SvmFacilitator,
  loadX402SvmFacilitatorV1,
  type SvmFacilitatorScheme,
  type SvmPaymentPayload,
  type SvmRequirements,
} from "./solana.js";

/** How long the ledger remembers a Solana payment: past the longest life of any blockhash. */
const SOLANA_REPLAY_MEMORY_SECONDS = 180;

export { SOLANA_PAYMENT_LIFE_SECONDS, solanaDeadlineProblem };

const MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";

export type RoutedSolanaNetwork = SolanaNetworkPaymentConfig & {
  settlement: SolanaSettlementRoute;
};

/** How Solana payments are settled, for the startup log. Never includes secrets. */
export function describeSolanaRoute(net: RoutedSolanaNetwork): string {
  const route = net.settlement;
  const rule = `Solana pays only for jobs due within ${SOLANA_PAYMENT_LIFE_SECONDS - SETTLEMENT_MARGIN_SECONDS} s`;
  if (route.kind === "direct")
    return `payments settle directly: this server co-signs as fee payer ${route.feePayer} (SOLANA_FEE_PAYER_KEY, which pays the fees in SOL) and sends them via ${redactUrl(route.rpcUrl, "origin")}; ${rule}`;
  return `payments settle through the first x402 facilitator listing ${net.network.caip2} (its fee payer co-signs); ${rule}`;
}

const refuse = (code: string, message: string): PaymentError => new PaymentError(message, { code });

export function createSvmScheme(
  net: RoutedSolanaNetwork,
  settings: { settleTimeoutSeconds: number },
  _deps: PaymentGateDeps,
): NetworkScheme {
  const { network, payTo } = net;
  const route = net.settlement;
  // Loaded with the gate (production only), off the request path; reported by the first payment.
  const svm = loadX402Svm();
  svm.catch(() => undefined);

  // The fee payer named in offers: ours, or the facilitator's (known once its /supported answered;
  // startup's route check asks it before the server listens).
  let feePayer: string | undefined = route.kind === "direct" ? route.feePayer : undefined;
  let facilitator: Promise<FacilitatorSide> | undefined;
  if (route.kind === "facilitator") {
    facilitator = import("../facilitator-router.js").then(async (r) => {
      const router = r.routerFor(route, settings.settleTimeoutSeconds * 1000);
      await router.initialize();
      const kind = router.kindFor(2, network, "exact");
      const payer = kind?.extra?.feePayer;
      if (typeof payer === "string") feePayer = payer;
      return {
        client: router.clientFor(2, network, "exact"),
        clientV1: v1Knows(network) ? router.clientFor(1, network, "exact") : undefined,
        feePayer: feePayer,
      };
    });
    facilitator.catch(() => undefined);
  }
  // Direct route: the official schemes over this server's fee payer; x402 v1's (which names the
  // network "solana-devnet", so the signer knows the RPC by both names) only where v1 has a name.
  const direct =
    route.kind === "direct"
      ? (async (): Promise<DirectSide> => {
          const [x402, scheme, schemeV1, kit] = await Promise.all([
            svm,
            loadX402SvmFacilitator(),
            v1Knows(network) ? loadX402SvmFacilitatorV1() : undefined,
            loadSolanaKit(),
          ]);
          const signer = await kit.createKeyPairSignerFromBytes(route.feePayerKey);
          // Credentials in the URL go as Basic authorization: fetch refuses a URL that holds them,
          // with the whole URL in its message.
          const { target, headers } = request(route.rpcUrl);
          const plain = target.href;
          const url = network.caip2 === MAINNET ? kit.mainnet(plain) : kit.devnet(plain);
          const rpc = headers.authorization
            ? kit.createSolanaRpc(url, { headers: { authorization: headers.authorization } })
            : kit.createSolanaRpc(url);
          const facilitatorSigner = x402.toFacilitatorSvmSigner(signer, {
            [network.caip2]: rpc,
            [network.v1Name]: rpc,
          });
          return {
            2: new scheme.ExactSvmScheme(facilitatorSigner),
            1: schemeV1 && new schemeV1.ExactSvmSchemeV1(facilitatorSigner),
          };
        })()
      : undefined;
  direct?.catch(() => undefined);
  /** The in-process scheme for the payment's x402 version (verify() took v1 only where it exists). */
  const directScheme = async (p: SolanaPayment): Promise<SvmFacilitatorScheme> => {
    const scheme = (await direct!)[p.x402Version];
    if (!scheme) throw new Error(`no x402 v${p.x402Version} scheme for ${network.caip2}`);
    return scheme;
  };

  const offer = (capability: Capability, resourceUrl: string): PaymentOffer => ({
    network,
    payTo,
    amount: capability.priceAtomic,
    maxTimeoutSeconds: SOLANA_PAYMENT_LIFE_SECONDS,
    resourceUrl,
    description: capability.declaration.description ?? `Run capability "${capability.name}"`,
    extra: { feePayer: feePayer ?? "" },
  });

  async function verify(
    sent: SentPayment,
    capability: Capability,
    job: { deadline: number },
    resourceUrl: string,
  ): Promise<SolanaPayment> {
    const raw = decode(sent);
    const version = raw.x402Version;
    if (version === 1) {
      if ("object" in sent)
        throw refuse(
          "malformed",
          `${sent.name} has x402Version 1: send an x402 v2 PaymentPayload (x402 v1 has no MCP transport)`,
        );
      if (!v1Knows(network))
        throw refuse(
          "version",
          `payment on ${network.caip2} has x402Version 1, but x402 v1 has no name for this network: pay in x402 v2 (PAYMENT-SIGNATURE)`,
        );
    } else if (version !== 2)
      throw refuse(
        "version",
        `payment on ${network.caip2} has unsupported x402Version ${JSON.stringify(version)} (supported: 1, 2)`,
      );
    // v2 echoes the requirement it accepted; v1 names only scheme and network at the top level.
    const accepted = (version === 2 ? raw.accepted : raw) as Record<string, unknown> | undefined;
    if (typeof accepted !== "object" || accepted === null)
      throw refuse(
        "malformed",
        `${sent.name} is missing \`accepted\` (the payment requirement you chose)`,
      );
    if (accepted.scheme !== "exact")
      throw refuse(
        "scheme",
        `unsupported payment scheme ${JSON.stringify(accepted.scheme).slice(0, 80)}: only "exact" is accepted`,
      );
    if (
      accepted.network !== network.caip2 &&
      (version === 2 || accepted.network !== network.v1Name)
    )
      throw refuse(
        "network",
        `payment is for network ${JSON.stringify(accepted.network).slice(0, 80)} but this service takes payments on "${network.caip2}" (${network.v1Name})`,
      );
    const tooFar = solanaDeadlineProblem(job.deadline);
    if (tooFar)
      throw refuse(
        "deadline_too_far_for_network",
        `payment on ${network.caip2} refused before running the job: ${tooFar}. Pay on another offered network, or send a nearer deadline`,
      );
    if (feePayer === undefined)
      throw refuse(
        "facilitator_unavailable",
        `payments on ${network.caip2} cannot be taken yet: the facilitator's fee payer is not known; try again later`,
      );
    const ours = offer(capability, resourceUrl);
    // v1: the requirement the client would have read from our v1 body. Its amount, mint, payee
    // and fee payer are inside the transaction only: the official v1 verification (confirm())
    // checks them against this requirement before the job runs.
    const requirement: Record<string, unknown> =
      version === 2 ? requirementV2(ours) : requirementV1(ours);
    if (version === 2) {
      const extra = accepted.extra as Record<string, unknown> | undefined;
      const mismatch =
        accepted.amount !== requirement.amount
          ? `amount ${String(accepted.amount)} (price of "${capability.name}" is ${String(requirement.amount)})`
          : accepted.asset !== requirement.asset
            ? `asset ${String(accepted.asset)} (expected ${String(requirement.asset)})`
            : accepted.payTo !== requirement.payTo
              ? `payTo ${String(accepted.payTo)} (expected ${String(requirement.payTo)})`
              : extra?.feePayer !== feePayer
                ? `extra.feePayer ${String(extra?.feePayer)} (expected ${feePayer})`
                : undefined;
      if (mismatch)
        throw refuse(
          "requirement",
          `accepted requirement does not match this capability's offer: ${mismatch}; fetch a fresh 402 and pay what it asks`,
        );
    }
    const inner = raw.payload as Record<string, unknown> | undefined;
    const transaction = inner?.transaction;
    if (typeof transaction !== "string" || transaction === "")
      throw refuse(
        "malformed",
        `${sent.name} has no payload.transaction (base64 of the signed transaction)`,
      );
    const x402 = await svm;
    let decoded;
    let messageHash: string;
    try {
      decoded = x402.decodeTransactionFromPayload({ transaction });
      messageHash = x402.transactionMessageHash(decoded);
    } catch {
      throw refuse(
        "malformed",
        `${sent.name} payload.transaction is not a Solana transaction in base64`,
      );
    }
    return {
      family: "svm",
      x402Version: version,
      scheme: "exact",
      network: network.caip2,
      // The transfer's authority, as the official verification names it (confirm() fills it in):
      // decoding the message a second time here for it cost more CPU than the rest of our checks.
      payer: "",
      amount: capability.priceAtomic,
      asset: network.asset,
      transaction,
      messageHash,
      validBefore: Math.floor(Date.now() / 1000) + SOLANA_REPLAY_MEMORY_SECONDS,
      // v1 spelled as v1 spells it (the official v1 scheme compares it with the requirement's).
      payload: version === 2 ? raw : { ...raw, network: network.v1Name },
      requirement,
    };
  }

  /** The facilitator for this x402 version's Solana payments (facilitator route): refuses the payment when there is none. */
  async function facilitatorClient(x402Version: 1 | 2): Promise<FacilitatorClient> {
    let side: FacilitatorSide;
    try {
      side = await facilitator!;
    } catch (err) {
      throw new PaymentError(
        `payment could not be verified, so the job was not run: ${err instanceof Error ? err.message : String(err)}; try again later`,
        { cause: err, code: "facilitator_unavailable" },
      );
    }
    const client = x402Version === 2 ? side.client : side.clientV1;
    if (client) return client;
    throw refuse(
      "facilitator_refused",
      `no configured x402 facilitator settles x402 v${x402Version} "exact" payments on ${network.caip2} (${network.v1Name}), so the job was not run`,
    );
  }

  const solana = (payment: PaidPayment): SolanaPayment => {
    if (payment.family !== "svm") throw new Error(`not a Solana payment: ${payment.network}`); // the gate routes by network
    return payment;
  };
  const forScheme = (p: SolanaPayment) =>
    [
      p.payload as unknown as SvmPaymentPayload,
      p.requirement as unknown as SvmRequirements,
    ] as const;

  return {
    family: "svm",
    caip2: network.caip2,
    v1Name: network.v1Name,
    offer,
    unpayable(deadline, nowMs) {
      if (feePayer === undefined)
        return `the facilitator's fee payer on ${network.caip2} is not known yet`;
      return solanaDeadlineProblem(deadline, nowMs);
    },
    verify,
    // The transaction's message: what the payer signed, whatever fills the fee payer's slot (the
    // official scheme's own duplicate guard keys by the same hash, in one process only).
    replayKey: (payment) => `svm:${network.caip2}:${solana(payment).messageHash}`,
    async confirm(payment) {
      const p = solana(payment);
      let answer: {
        isValid: boolean;
        invalidReason?: string;
        invalidMessage?: string;
        payer?: string;
      };
      if (direct) {
        try {
          answer = await (await directScheme(p)).verify(...forScheme(p));
        } catch (err) {
          throw new PaymentError(
            `payment could not be verified, so the job was not run: ${err instanceof Error ? err.message : String(err)}; try again later`,
            { cause: err, code: "verification_unavailable" },
          );
        }
      } else {
        const client = await facilitatorClient(p.x402Version);
        try {
          answer = await client.verify(p);
        } catch (err) {
          throw new PaymentError(
            `payment could not be verified, so the job was not run: ${err instanceof Error ? err.message : String(err)}; try again later`,
            { cause: err, code: "facilitator_unavailable" },
          );
        }
      }
      if (!answer.isValid)
        throw refuse(
          direct ? "transaction_refused" : "facilitator_refused",
          `${direct ? "the payment transaction was refused" : "the facilitator refused the payment"}: ${[answer.invalidReason, answer.invalidMessage].filter(Boolean).join(": ") || "no reason given"}`,
        );
      if (typeof answer.payer === "string") p.payer = answer.payer;
    },
    async settle(payment): Promise<Receipt> {
      const p = solana(payment);
      let answer: {
        success: boolean;
        transaction?: string;
        payer?: string;
        errorReason?: string;
        errorMessage?: string;
      };
      if (direct) {
        try {
          answer = await (await directScheme(p)).settle(...forScheme(p));
        } catch (err) {
          throw new SettlementError(
            `settlement on ${network.caip2} failed unexpectedly: ${err instanceof Error ? err.message : String(err)}; the payment may or may not have been settled`,
            { uncertain: true, cause: err },
          );
        }
      } else {
        let client: FacilitatorClient;
        try {
          client = await facilitatorClient(p.x402Version);
        } catch (err) {
          throw new SettlementError(err instanceof Error ? err.message : String(err), {
            cause: err,
          });
        }
        try {
          answer = await client.settle(p);
        } catch (err) {
          const uncertain = (err as { uncertain?: boolean }).uncertain === true;
          throw new SettlementError(
            `${err instanceof Error ? err.message : String(err)}${uncertain ? "; the payment may or may not have been settled" : ""}`,
            { uncertain, cause: err },
          );
        }
      }
      const reason =
        [answer.errorReason, answer.errorMessage].filter(Boolean).join(": ") || "no reason given";
      if (!answer.success) {
        // Sent but not confirmed in time: it may still land before its blockhash expires.
        if (answer.errorReason === "settlement_pending" || (answer.transaction ?? "") !== "")
          throw new SettlementError(
            `settlement on ${network.caip2} is unconfirmed (${reason}; transaction ${answer.transaction || "unknown"})`,
            { uncertain: true },
          );
        throw new SettlementError(
          `the payment could not be settled on ${network.caip2}: ${reason}`,
          {
            permanent: true,
          },
        );
      }
      if (typeof answer.transaction !== "string" || answer.transaction === "")
        throw new SettlementError(
          `settlement on ${network.caip2} reported success without a transaction signature; the payment may or may not have been settled`,
          { uncertain: true },
        );
      return {
        transaction: answer.transaction,
        // As the client's x402 version names it (X-PAYMENT-RESPONSE for v1 says "solana-devnet").
        network: p.x402Version === 2 ? network.caip2 : network.v1Name,
        payer: typeof answer.payer === "string" && answer.payer !== "" ? answer.payer : p.payer,
      };
    },
    describe: () => describeSolanaRoute(net),
  };
}

interface FacilitatorSide {
  client: FacilitatorClient | undefined;
  /** The facilitator for x402 v1 payments (none on a network v1 has no name for). */
  clientV1: FacilitatorClient | undefined;
  feePayer: string | undefined;
}

/** The official schemes over this server's fee payer, by x402 version (v1: where v1 names the network). */
interface DirectSide {
  2: SvmFacilitatorScheme;
  1: SvmFacilitatorScheme | undefined;
}

function decode(sent: SentPayment): Record<string, unknown> {
  if ("object" in sent) {
    const value = sent.object;
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw refuse("malformed", `${sent.name} is not a PaymentPayload object`);
    if (JSON.stringify(value).length > MAX_PAYMENT_HEADER_BYTES)
      throw refuse("malformed", `${sent.name} is larger than ${MAX_PAYMENT_HEADER_BYTES} bytes`);
    return value as Record<string, unknown>;
  }
  const decoded = decodeBase64Json(sent.value);
  if (!decoded.ok) throw refuse("malformed", `${sent.name} header ${decoded.reason}`);
  return decoded.value;
}
