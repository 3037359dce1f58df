/**
 * The Solana family: USDC (an SPL token) on one Solana network, "exact" scheme, verified and settled
 * by the official @x402/svm code (svm/official.ts).
 *   offer()   - the network's mint, the payee (PAY_TO_SOLANA), the price, and `extra.feePayer`: the
 *               account that pays the fees and co-signs (the facilitator's, from its /supported; or
 *               this server's own, SOLANA_FEE_PAYER_KEY).
 *   verify()  - what the offer fixes (svm/checks.ts: the requirement an x402 v2 client accepted; v1
 *               clients, on `solana` and `solana-devnet`, name only scheme and network), the deadline
 *               rule (svm/life.ts), and the transaction, decoded once (svm/transaction.ts): its
 *               compute budget within SOLANA_MAX_COMPUTE_UNITS and SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS
 *               (the fee payer pays it), its message as the replay key, whichever x402 version carried it.
 *   confirm() - the official verification (instructions, amount, mint, payee, fee payer, simulation)
 *               and, with the network's RPC, the blockhash's life (svm/blockhash.ts): the transaction
 *               must still be able to land at the job's deadline plus SETTLEMENT_MARGIN_SECONDS.
 *   settle()  - the facilitator's /settle, or the scheme's: co-sign, send, confirm (else reconcile()).
 * A Solana transaction dies with its blockhash (about 60-90 s after the client fetched it), and it
 * is settled only after the job, so Solana pays only for jobs due soon (SOLANA_PAYMENT_LIFE_SECONDS).
 * Part of your project: edit freely.
 */
import type { SolanaNetworkPaymentConfig, SolanaSettlementRoute } from "./config.js";
import { redactUrl } from "../../ops/redact.js";
import type { Capability, PaidPayment } from "../../types.js";
import type { SolanaPayment } from "./payment.js";
import type { PaymentGateDeps } from "../gate.js";
import type { NetworkScheme, Receipt, Reconciled } from "../scheme.js";
import { SETTLEMENT_MARGIN_SECONDS, SettlementError } from "../settlement.js";
import { networkSettingSuffix } from "../networks.js";
import type { SentPayment } from "../scheme.js";
import { type PaymentOffer, requirementV1, requirementV2 } from "../x402.js";
import { type BlockhashClock, blockhashClock } from "./blockhash.js";
import { checkAccepted, checkEnvelope, decodeSent, payloadTransaction, refuse } from "./checks.js";
import { type LandedFinder, landedFinder } from "./landed.js";
import {
  SOLANA_PAYABLE_WITHIN_SECONDS,
  SOLANA_PAYMENT_LIFE_SECONDS,
  solanaDeadlineProblem,
} from "./life.js";
import { directSide, facilitatorSide, type OfficialSide, type SettleAnswer } from "./official.js";
import { messageSearch, solanaSettlementState } from "./reconcile.js";
import { loadSolanaKit } from "./solana.js";
import {
  type ComputeBudgetCaps,
  DEFAULT_MAX_COMPUTE_UNITS,
  DEFAULT_MAX_PRIORITY_FEE_MICROLAMPORTS,
  type ReadTransaction,
  transactionProblem,
  transactionReader,
} from "./transaction.js";

/** Settlement answers after which the transaction may land (the official scheme's reasons). */
const MAYBE_SENT = new Set(["settlement_pending", "transaction_failed"]);
/** How long the ledger remembers a Solana payment: past the longest life of any blockhash. */
const SOLANA_REPLAY_MEMORY_SECONDS = 180;

export { SOLANA_PAYMENT_LIFE_SECONDS, solanaDeadlineProblem };

export type RoutedSolanaNetwork = SolanaNetworkPaymentConfig & {
  settlement: SolanaSettlementRoute;
};

/** The compute-budget caps of a network (SOLANA_MAX_COMPUTE_UNITS, SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS). */
export const computeBudgetCaps = (net: SolanaNetworkPaymentConfig): ComputeBudgetCaps =>
  net.computeBudget ?? {
    maxComputeUnits: DEFAULT_MAX_COMPUTE_UNITS,
    maxPriorityFeeMicroLamports: DEFAULT_MAX_PRIORITY_FEE_MICROLAMPORTS,
  };

/** How Solana payments are settled, for the startup log. Never includes secrets. */
export function describeSolanaRoute(net: RoutedSolanaNetwork): string {
  const route = net.settlement;
  const caps = computeBudgetCaps(net);
  const rule =
    `Solana pays only for jobs due within ${SOLANA_PAYABLE_WITHIN_SECONDS} s; ` +
    `transactions asking more than ${caps.maxComputeUnits} compute units or ${caps.maxPriorityFeeMicroLamports} micro-lamports per unit are refused`;
  if (route.kind === "direct")
    return `payments settle directly: this server co-signs as fee payer ${route.feePayer} (SOLANA_FEE_PAYER_KEY, which pays the fees in SOL) and sends them via ${redactUrl(route.rpcUrl, "origin")}; ${rule}`;
  const life = net.rpcUrl
    ? ""
    : `; X402_RPC_URL_${networkSettingSuffix(net.written)} is not set, so a transaction's blockhash is not checked to outlive its job (set it to refuse payments that would expire before settling)`;
  return `payments settle through the first x402 facilitator listing ${net.network.caip2} (its fee payer co-signs); ${rule}${life}`;
}

export const createSvmScheme = (
  net: RoutedSolanaNetwork,
  settings: { settleTimeoutSeconds: number },
  _deps: PaymentGateDeps,
): NetworkScheme => new SvmScheme(net, settings.settleTimeoutSeconds);

class SvmScheme implements NetworkScheme {
  readonly family = "svm" as const;
  readonly fixedWindow = true;
  readonly caip2: string;
  readonly v1Name: string;
  private readonly network: SolanaNetworkPaymentConfig["network"];
  private readonly caps: ComputeBudgetCaps;
  private readonly official: OfficialSide;
  /** The transaction reader, loaded with the gate (production only), off the request path. */
  private readonly reader: Promise<(base64: string) => ReadTransaction>;
  /** The blockhash's life, asked of the network's RPC (none configured: not checked). */
  private readonly clock: BlockhashClock | undefined;
  /** The network's RPC (the direct route's, or X402_RPC_URL_<NET>): blockhashes and signatures. */
  private readonly rpcUrl: string | undefined;
  /** Finds a sent transaction whose signature is not known, on that RPC (svm/landed.ts). */
  private readonly finder: LandedFinder | undefined;

  constructor(
    private readonly net: RoutedSolanaNetwork,
    settleTimeoutSeconds: number,
  ) {
    const route = net.settlement;
    this.network = net.network;
    this.caip2 = net.network.caip2;
    this.v1Name = net.network.v1Name;
    this.caps = computeBudgetCaps(net);
    this.official =
      route.kind === "direct"
        ? directSide(net, route, this.caps, settleTimeoutSeconds)
        : facilitatorSide(net, route, settleTimeoutSeconds);
    this.reader = loadSolanaKit().then(transactionReader);
    this.reader.catch(() => undefined); // reported by the first payment
    this.rpcUrl = route.kind === "direct" ? route.rpcUrl : net.rpcUrl;
    this.clock = this.rpcUrl === undefined ? undefined : blockhashClock(this.rpcUrl);
    this.finder = this.rpcUrl === undefined ? undefined : landedFinder(this.rpcUrl, this.reader);
  }

  offer(capability: Capability, resourceUrl: string): PaymentOffer {
    return {
      network: this.network,
      payTo: this.net.payTo,
      amount: capability.priceAtomic,
      maxTimeoutSeconds: SOLANA_PAYMENT_LIFE_SECONDS,
      resourceUrl,
      description: capability.declaration.description ?? `Run capability "${capability.name}"`,
      extra: { feePayer: this.official.feePayer() ?? "" },
    };
  }

  unpayable(deadline: number, nowMs?: number): string | undefined {
    if (this.official.feePayer() === undefined)
      return `the facilitator's fee payer on ${this.caip2} is not known yet`;
    return solanaDeadlineProblem(deadline, nowMs);
  }

  async verify(
    sent: SentPayment,
    capability: Capability,
    job: { deadline: number },
    resourceUrl: string,
  ): Promise<SolanaPayment> {
    const raw = decodeSent(sent);
    const { version, accepted } = checkEnvelope(raw, sent, this.network);
    const tooFar = solanaDeadlineProblem(job.deadline);
    if (tooFar)
      throw refuse(
        "deadline_too_far_for_network",
        `payment on ${this.caip2} refused before running the job: ${tooFar}. Pay on another offered network, or send a nearer deadline`,
      );
    const feePayer = this.official.feePayer();
    if (feePayer === undefined)
      throw refuse(
        "facilitator_unavailable",
        `payments on ${this.caip2} cannot be taken yet: the facilitator's fee payer is not known; try again later`,
      );
    const ours = this.offer(capability, resourceUrl);
    // v1: the requirement the client would have read from our v1 body. Its amount, mint, payee
    // and fee payer are inside the transaction only: the official v1 verification (confirm())
    // checks them against this requirement before the job runs.
    const requirement = version === 2 ? requirementV2(ours) : requirementV1(ours);
    if (version === 2) checkAccepted(accepted, requirement, capability.name, feePayer);
    const transaction = payloadTransaction(raw, sent);
    const { messageHash, blockhash } = await this.read(transaction, sent.name);
    return {
      family: "svm",
      x402Version: version,
      scheme: "exact",
      network: this.caip2,
      // The transfer's authority, as the official verification names it (confirm() fills it in).
      payer: "",
      amount: capability.priceAtomic,
      asset: this.network.asset,
      transaction,
      messageHash,
      blockhash,
      landBy: job.deadline + SETTLEMENT_MARGIN_SECONDS,
      validBefore: Math.floor(Date.now() / 1000) + SOLANA_REPLAY_MEMORY_SECONDS,
      // v1 spelled as v1 spells it (the official v1 scheme compares it with the requirement's).
      payload: version === 2 ? raw : { ...raw, network: this.v1Name },
      requirement,
    };
  }

  /** The transaction read once; refused when it is none, or when it would cost the fee payer too much. */
  private async read(transaction: string, name: string): Promise<ReadTransaction> {
    const readTransaction = await this.reader;
    let decoded: ReadTransaction;
    try {
      decoded = readTransaction(transaction);
    } catch {
      throw refuse(
        "malformed",
        `${name} payload.transaction is not a Solana transaction in base64`,
      );
    }
    const problem = transactionProblem(decoded, this.caps);
    if (problem)
      throw refuse(
        problem.code,
        `payment on ${this.caip2} refused before running the job: ${problem.text}`,
      );
    return decoded;
  }

  // The transaction's message: what the payer signed, whatever fills the fee payer's slot (the
  // official scheme's own duplicate guard keys by the same hash, in one process only).
  replayKey(payment: PaidPayment): string {
    return `svm:${this.caip2}:${solana(payment).messageHash}`;
  }

  async confirm(payment: PaidPayment): Promise<void> {
    const p = solana(payment);
    const [answer, expiring] = await Promise.all([
      this.official.verify(p),
      this.blockhashProblem(p),
    ]);
    if (expiring)
      throw refuse(
        "blockhash_expires_before_deadline",
        `payment on ${this.caip2} refused before running the job: ${expiring}`,
      );
    const direct = this.net.settlement.kind === "direct";
    if (!answer.isValid)
      throw refuse(
        direct ? "transaction_refused" : "facilitator_refused",
        `${direct ? "the payment transaction was refused" : "the facilitator refused the payment"}: ${[answer.invalidReason, answer.invalidMessage].filter(Boolean).join(": ") || "no reason given"}`,
      );
    if (typeof answer.payer === "string") p.payer = answer.payer;
  }

  /** Why the blockhash would expire before the job is settled, or undefined (no RPC: not checked). */
  private async blockhashProblem(p: SolanaPayment): Promise<string | undefined> {
    if (!this.clock) return undefined;
    try {
      return await this.clock.problem(p.blockhash, p.landBy);
    } catch (err) {
      throw refuse(
        "verification_unavailable",
        `payment could not be verified, so the job was not run: the transaction's blockhash could not be checked on ${this.caip2} (${err instanceof Error ? err.message : String(err)}); try again later`,
      );
    }
  }

  async settle(payment: PaidPayment): Promise<Receipt> {
    const p = solana(payment);
    const answer = await this.official.settle(p);
    if (!answer.success) throw await this.notSettled(p, answer);
    if (typeof answer.transaction !== "string" || answer.transaction === "")
      throw new SettlementError(
        `settlement on ${this.caip2} reported success without a transaction signature; the payment may or may not have been settled`,
        { uncertain: true },
      );
    return {
      transaction: answer.transaction,
      // As the client's x402 version names it (X-PAYMENT-RESPONSE for v1 says "solana-devnet").
      network: p.x402Version === 2 ? this.caip2 : this.v1Name,
      payer: typeof answer.payer === "string" && answer.payer !== "" ? answer.payer : p.payer,
    };
  }

  /** A settlement that answered failure: unconfirmed (it may still land) or not landed, said for Solana. */
  private async notSettled(p: SolanaPayment, answer: SettleAnswer): Promise<SettlementError> {
    const reason =
      [answer.errorReason, answer.errorMessage].filter(Boolean).join(": ") || "no reason given";
    // Sent but not confirmed in time, or perhaps sent ("transaction_failed"): it may still land.
    if (MAYBE_SENT.has(answer.errorReason ?? "") || answer.transaction)
      return new SettlementError(
        `settlement on ${this.caip2} is unconfirmed (${reason}; transaction ${answer.transaction || "unknown"})`,
        { uncertain: true, ...(answer.transaction && { broadcastTx: answer.transaction }) },
      );
    const expired = (await this.clock?.valid(p.blockhash)) === false;
    const advice = expired
      ? "The transaction did not land on Solana and its blockhash has expired, so it never can: sign a new transaction to run the job again."
      : `The transaction did not land on Solana (${this.caip2} or the fee payer refused it), so it will not be accepted again: sign a new transaction to run the job again.`;
    return new SettlementError(
      `the payment transaction was not landed on ${this.caip2}: ${reason}${expired ? "; its blockhash has expired" : ""}`,
      { permanent: true, advice },
    );
  }

  /** The settlement's fate on the network's RPC (svm/reconcile.ts); sent after verification. */
  reconcile(
    auth: string,
    tx: string | undefined,
    validBefore: number,
    blockhash?: string,
    payer?: string,
  ): Promise<Reconciled> {
    const sentAfter = validBefore - SOLANA_REPLAY_MEMORY_SECONDS;
    const search = messageSearch(auth, `svm:${this.caip2}:`, payer, sentAfter);
    const settlement = { signature: tx, blockhash, validBefore, search };
    return solanaSettlementState(this.rpcUrl, settlement, this.finder);
  }

  describe(): string {
    return describeSolanaRoute(this.net);
  }
}

function solana(payment: PaidPayment): SolanaPayment {
  if (payment.family !== "svm") throw new Error(`not a Solana payment: ${payment.network}`); // the gate routes by network
  return payment as SolanaPayment;
}
