/**
 * The payer-family registry, shared like guard.ts by `create-agent call` and every generated client: the
 * ONLY place that lists the network families a payer pays on (guard-evm.ts, guard-svm.ts). Everything that
 * depends on a payment's family (its network names, which family pays an offer, which check a signed
 * payment gets, how soon a job paid in it must be due) is asked of the family here, never branched on.
 * A third family is its guard file and one line in PAYER_FAMILIES. Also here, for `call` and the client
 * alike: the check of a payment about to be sent, and the fetch every payment leaves through.
 *
 * Web-standard code only, like guard.ts.
 */
import { EVM_PAYER } from "./guard-evm.js";
import { SVM_PAYER } from "./guard-svm.js";
import {
  decodeBase64Json,
  isObjectRecord,
  type PayerFamily,
  type PayerFamilyId,
  PaymentGuardError,
  type PaymentOffer,
  paymentHeaderOf,
  type SignedPayment,
  type SigningLimit,
} from "./guard.js";

/** Every payer family, in order of preference; the first also checks a payment no family claims. */
export const PAYER_FAMILIES: readonly PayerFamily[] = [EVM_PAYER, SVM_PAYER];

/** The networks a payer knows by name: x402 v1 name -> CAIP-2 id (the server's network table, same ids). */
export const PAYER_NETWORKS: Readonly<Record<string, string>> = Object.assign(
  {},
  ...PAYER_FAMILIES.map((family) => family.networks),
) as Record<string, string>;

/** A network name or CAIP-2 id as its CAIP-2 id ("solana-devnet" -> "solana:EtWT..."); unknown names as given. */
export function networkId(network: string): string {
  return Object.prototype.hasOwnProperty.call(PAYER_NETWORKS, network)
    ? PAYER_NETWORKS[network]!
    : network;
}

/** The known name of a network ("eip155:84532" -> "base-sepolia"), else undefined. */
export function networkName(network: string): string | undefined {
  const id = networkId(network);
  return Object.keys(PAYER_NETWORKS).find((name) => PAYER_NETWORKS[name] === id);
}

/** The family that pays on a network (a name or CAIP-2 id), else undefined. */
export function payerFamily(network: string): PayerFamily | undefined {
  const id = networkId(network);
  return PAYER_FAMILIES.find((family) => family.pays(id));
}

/** Which kind of payment a network takes: its family's id ("evm", "svm"), else undefined. */
export function networkFamily(network: string): PayerFamilyId | undefined {
  return payerFamily(network)?.id;
}

/**
 * The environment variable of a network's own RPC endpoint, as the server names its per-network settings:
 * X402_RPC_URL_ and the network's known name (else the id as given), upper-cased, every character other
 * than A-Z and 0-9 as "_" ("solana:EtWT..." -> X402_RPC_URL_SOLANA_DEVNET).
 */
export function rpcUrlVariable(network: string): string {
  const written = networkName(network) ?? network;
  return `X402_RPC_URL_${written.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

/**
 * Checks the payment a request is about to carry, whatever its network: by the check of the family whose
 * kind of payment it is (an EVM authorization, a Solana transaction with `reader`, the reader its payer
 * loaded); a payment no family claims gets the first family's check, which refuses it, and one that two
 * families claim is refused.
 */
export async function checkPaymentToSend(
  header: string,
  offers: readonly PaymentOffer[],
  limit: SigningLimit,
  reader?: object,
): Promise<SignedPayment> {
  const decoded = decodeBase64Json(header, "the payment header about to be sent", "signed");
  const inner = isObjectRecord(decoded) ? decoded.payload : undefined;
  const claimed = isObjectRecord(inner) ? PAYER_FAMILIES.filter((f) => f.claims(inner)) : [];
  if (claimed.length > 1)
    throw new PaymentGuardError(
      "signed",
      "the payment about to be sent is of two kinds at once; it was not sent",
    );
  return (claimed[0] ?? PAYER_FAMILIES[0]!).checkSigned(header, offers, limit, reader);
}

/** A fetch as the x402 client calls it. */
export type PayingFetch = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

/** The paying fetch `checkedPaying` makes, and how to send its paid request once more. */
export interface CheckedPaying {
  fetch: PayingFetch;
  /**
   * Sends the last request that carried a payment again, identically (the same payment, which is settled at
   * most once): undefined when none was sent. For a job the service lost track of (an async job's poll
   * answered 404): the service answers it from its ledger, or queues it again under the same payment.
   */
  resend: () => Promise<Response> | undefined;
}

/**
 * The fetch the x402 client pays through, in `call` and every generated client alike. Its first request
 * without a payment gets `first` (the 402 already read and checked, so the service is not asked twice);
 * every payment header it sends is handed to `check` first, at the last moment before it leaves (a throw
 * stops it); then `send` sends the request.
 */
export function checkedPaying(
  first: Response,
  check: (header: string) => Promise<void>,
  send: PayingFetch,
): CheckedPaying {
  let replay: Response | undefined = first;
  let paid: Request | undefined;
  const fetch: PayingFetch = async (input, init) => {
    const header = paymentHeaderOf(
      new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)),
    );
    if (header === undefined && replay) {
      const answer = replay;
      replay = undefined;
      return answer;
    }
    if (header !== undefined) {
      await check(header);
      paid = new Request(input instanceof Request ? input.clone() : input, init);
    }
    return send(input, init);
  };
  return { fetch, resend: () => paid && send(paid.clone()) };
}

/** The network a payer pays on, or why there is none (for the payer to say in its own words). */
export type NetworkChoice =
  | { ok: true; id: string; family: PayerFamilyId }
  | {
      ok: false;
      /** not-offered: the wanted network is not in the 402; deadline: only a family whose jobs must be due
       * sooner (`family`, Solana's) has a key, and the job's deadline is too far for it; no-key: no offered
       * network has a key (`family`: the first's, unless several families are offered). */
      problem: "not-offered" | "deadline" | "no-key";
      family?: PayerFamilyId;
      offered: string[];
    };

/**
 * The network to pay on: `wanted` when given (a name or CAIP-2 id) and offered, else the first offered
 * network the payer holds a key for (`keys`, by family id), in a family whose maxDeadlineSeconds the job's
 * deadline keeps.
 */
export function choosePaymentNetwork(
  offers: readonly PaymentOffer[],
  wanted: string | undefined,
  keys: Partial<Record<PayerFamilyId, boolean>>,
  deadlineSeconds: number,
): NetworkChoice {
  const offered = [...new Set(offers.map((o) => o.network))];
  if (wanted !== undefined) {
    const id = networkId(wanted);
    const family = networkFamily(id);
    return family && offers.some((o) => networkId(o.network) === id)
      ? { ok: true, id, family }
      : { ok: false, problem: "not-offered", offered };
  }
  let tooLate: PayerFamilyId | undefined;
  for (const offer of offers) {
    const family = payerFamily(offer.network);
    if (!family || !keys[family.id]) continue;
    const max = family.maxDeadlineSeconds;
    if (max === undefined || deadlineSeconds <= max)
      return { ok: true, id: networkId(offer.network), family: family.id };
    tooLate ??= family.id;
  }
  if (tooLate) return { ok: false, problem: "deadline", family: tooLate, offered };
  const families = new Set(offers.map((o) => networkFamily(o.network)));
  families.delete(undefined);
  const first = offers.find((o) => networkFamily(o.network) !== undefined) ?? offers[0]!;
  const family =
    families.size > 1 ? undefined : (networkFamily(first.network) ?? PAYER_FAMILIES[0]!.id);
  return { ok: false, problem: "no-key", ...(family ? { family } : {}), offered };
}
