/**
 * Paying a job with the official x402 client (@x402/fetch + @x402/evm + viem). Those packages are
 * devDependencies of create-agent, and no project's, so installs stay small: they are loaded with a
 * dynamic import() only when a service actually asks for payment, installed on that first use when
 * they are missing (../first-use.ts), and, if even that fails, reported before anything is signed
 * with the exact command that installs them. Dev-mode servers need none of it.
 */
import { join } from "node:path";
import {
  cacheFolder,
  importOnFirstUse,
  type Importer,
  notInstalled,
  toolRoot,
} from "../first-use.js";
import { devFacilitatorDependencies, x402ClientSpecs } from "../versions.js";
import { CallError } from "./errors.js";
import { shellQuote } from "../shell-quote.js";
import { isObject } from "../json-object.js";

/** What a settled payment's receipt says (PAYMENT-RESPONSE / X-PAYMENT-RESPONSE). */
export interface PaymentReceipt {
  transaction: string | null;
  network: string;
  payer: string | null;
  /**
   * What the signed payment said, never what the service claims: decimal USDC ("0.01") when it is the
   * network's USDC, else the token's atomic units (a token allowed with --asset).
   */
  amount: string;
  /** "USDC", or the address of the other token that was signed (allowed with --asset). */
  currency: string;
  /** The token signed: its contract (EVM) or mint (Solana). */
  asset: string;
  explorer?: string;
  /**
   * The agent runs on this machine (a loopback URL), so its chain may be a local one (dev:paid's) that
   * no public explorer has seen: no explorer link is given.
   */
  localAgent?: true;
}

/** Whether a URL is on this machine: localhost, 127.0.0.0/8 or ::1. */
export function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    return (
      host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127\./.test(host)
    );
  } catch {
    return false;
  }
}

/** "10000" -> "0.01", "1" -> "0.000001" (USDC atomic units, 6 decimals): no floating point. */
export function fromAtomicAmount(atomic: string | bigint): string {
  const digits = BigInt(atomic).toString().padStart(7, "0");
  const whole = digits.slice(0, -6).replace(/^0+(?=\d)/, "");
  const fraction = digits.slice(-6).replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole;
}

const EXPLORERS: Record<string, string> = {
  base: "https://basescan.org/tx/",
  "eip155:8453": "https://basescan.org/tx/",
  "base-sepolia": "https://sepolia.basescan.org/tx/",
  "eip155:84532": "https://sepolia.basescan.org/tx/",
};

/** Solana's explorer, per network: the query that selects the cluster ("" on mainnet). */
const SOLANA_EXPLORER_CLUSTERS: Record<string, string> = {
  solana: "",
  "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": "",
  "solana-devnet": "?cluster=devnet",
  "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": "?cluster=devnet",
};

/** The block explorer link of a transaction on a known network, else undefined. */
export function explorerUrl(network: string, transaction: string | null): string | undefined {
  const cluster = SOLANA_EXPLORER_CLUSTERS[network];
  if (cluster !== undefined)
    return transaction && /^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(transaction)
      ? `https://explorer.solana.com/tx/${transaction}${cluster}`
      : undefined;
  const prefix = EXPLORERS[network];
  return prefix && transaction && /^0x[0-9a-fA-F]{64}$/.test(transaction)
    ? `${prefix}${transaction}`
    : undefined;
}

/** The receipt headers of a paid answer, decoded; undefined when there is none (or it is unreadable). */
export function readReceiptHeader(
  headers: Headers,
): { transaction?: string; network?: string; payer?: string } | undefined {
  const value = headers.get("payment-response") ?? headers.get("x-payment-response");
  if (!value) return undefined;
  try {
    const decoded: unknown = JSON.parse(Buffer.from(value, "base64").toString("utf8"));
    if (!isObject(decoded)) return undefined;
    const text = (key: string) => (typeof decoded[key] === "string" ? decoded[key] : undefined);
    return { transaction: text("transaction"), network: text("network"), payer: text("payer") };
  } catch {
    return undefined;
  }
}

export const PAYER_KEY_VARIABLE = "X402_PAYER_KEY";

/**
 * The payer's private key, from the environment only (never a flag, never printed, not even partly).
 * `why` says what asked for payment, for the message.
 */
export function payerKey(env: NodeJS.ProcessEnv, why: string): `0x${string}` {
  const key = env[PAYER_KEY_VARIABLE];
  if (key === undefined || key === "")
    throw new CallError(
      "payment",
      `${why}, and ${PAYER_KEY_VARIABLE} is not set: put the payer's private key (0x followed by 64 hex digits) in the environment variable ${PAYER_KEY_VARIABLE} to pay; nothing was signed`,
    );
  if (!/^0x[0-9a-fA-F]{64}$/.test(key))
    throw new CallError(
      "payment",
      `${PAYER_KEY_VARIABLE} is not a private key: it must be 0x followed by 64 hex digits (its value is not shown); nothing was signed`,
    );
  return key as `0x${string}`;
}

/** The folder create-agent is installed in (two levels above dist/caller and src/caller). */
export { toolRoot } from "../first-use.js";

/** `npm install --no-save @x402/fetch@… @x402/evm@… viem@…`, the pinned versions create-agent is tested with. */
export function x402InstallCommand(): string {
  return `npm install --no-save ${X402_SPECS.join(" ")}`;
}

/** The x402 client's packages, pinned. */
const X402_SPECS = [
  ...x402ClientSpecs,
  // dev:paid's facilitator (../cli/dev-facilitator.ts) shares the folder: one install serves both.
  ...Object.entries(devFacilitatorDependencies).map(([name, version]) => `${name}@${version}`),
];

/**
 * Where the x402 client is installed on first use (node_modules/.cache of the project, or of create-agent),
 * from a lockfile shipped with create-agent (scripts/first-use-lock.mjs writes it): the payer holds a key,
 * so none of its dependencies is left to a version range.
 */
export const X402_FIRST_USE = {
  cache: cacheFolder("create-agent-x402"),
  specs: X402_SPECS,
  what: "the official x402 client",
  lockfile: join(toolRoot(), "locks", "x402-client.json"),
};

/**
 * What create-agent uses of the official x402 client (@x402/fetch, @x402/evm, viem), typed here rather
 * than imported: the light install builds create-agent without those packages. test/cli/call-x402-types.test.ts
 * checks that the real packages still fit these shapes.
 */
export interface X402Requirement {
  network: string;
  asset?: string;
  amount?: string;
  maxAmountRequired?: string;
}

type CreationHookResult = void | { abort: true; reason: string };

export interface X402Client {
  setSpendControls(controls: {
    maxAmountPerPayment: false;
    allowedAssets?: Array<{ network: `${string}:${string}`; asset: string }>;
  }): unknown;
  onBeforePaymentCreation(
    hook: (context: {
      paymentRequired: { x402Version: number; extensions?: unknown };
      selectedRequirements: X402Requirement;
    }) => Promise<CreationHookResult>,
  ): unknown;
  onAfterPaymentCreation(hook: () => Promise<void>): unknown;
}

export interface X402Modules {
  fetch: {
    x402Client: new () => X402Client;
    wrapFetchWithPayment(
      fetch: typeof globalThis.fetch,
      client: X402Client,
    ): typeof globalThis.fetch;
  };
  evm: {
    registerExactEvmScheme(
      client: X402Client,
      config: {
        signer: X402Signer;
        policies?: Array<(version: number, requirements: X402Requirement[]) => X402Requirement[]>;
      },
    ): unknown;
  };
  accounts: { privateKeyToAccount(key: `0x${string}`): X402Signer };
}

/** A viem local account, as the x402 client signs with it. */
export interface X402Signer {
  address: `0x${string}`;
}

/** Why a package could not be imported, in words: "is not installed", or "cannot be loaded (...)". */
export function loadFailure(error: unknown): string {
  return notInstalled(error)
    ? "is not installed"
    : `cannot be loaded (${(error as Error).message})`;
}

/**
 * Loads the official x402 client (with `importer` when given, else installing it on first use), or
 * says exactly how to install it (before anything is signed).
 */
export async function loadX402(importer?: Importer): Promise<X402Modules> {
  try {
    const specifiers = ["@x402/fetch", "@x402/evm/exact/client", "viem/accounts"];
    const [fetchModule, evm, accounts] = importer
      ? await Promise.all(specifiers.map((s) => importer(s)))
      : await importOnFirstUse(specifiers, X402_FIRST_USE);
    return {
      fetch: fetchModule as X402Modules["fetch"],
      evm: evm as X402Modules["evm"],
      accounts: accounts as X402Modules["accounts"],
    };
  } catch (error) {
    const detail = loadFailure(error);
    throw new CallError(
      "payment",
      `this service asks for payment, and the x402 client create-agent pays with (@x402/fetch, @x402/evm, viem) ${detail}; nothing was signed. Install it in the create-agent folder:\n  cd ${shellQuote(toolRoot())} && ${x402InstallCommand()}\n(services in dev mode need none of it: they run jobs without payment)`,
    );
  }
}

/** Keeps the requirements the payer may sign (x402 client policies). */
export type Policy = <R extends { network: string; asset?: string }>(
  version: number,
  requirements: R[],
) => R[];

/** The x402 client set up to pay on the chosen network, with the key of its family. */
export interface CallPayer {
  client: X402Client;
  payer: string;
  /** The reader the family's guard check needs (Solana's), else undefined. */
  reader: object | undefined;
  wrap: (fetch: typeof globalThis.fetch) => typeof globalThis.fetch;
  /** The family's RPC URL, hidden from any message that repeats it. */
  rpcUrl: string | undefined;
}

/**
 * A payer family's way to pay for `call` (EVM_CALL here, SVM_CALL in solana-payment.ts): its key from the
 * environment and its official x402 scheme client, on `network` only, keeping what `policy` keeps.
 */
export type CallFamily = (
  network: string,
  policy: Policy,
  env: NodeJS.ProcessEnv,
  why: string,
  importer: ((specifier: string) => Promise<unknown>) | undefined,
) => Promise<CallPayer>;

/** The EVM family: X402_PAYER_KEY and the official exact EVM scheme client. */
export const EVM_CALL: CallFamily = async (_network, policy, env, why, importer) => {
  const key = payerKey(env, why);
  const x402 = await loadX402(importer);
  let account;
  try {
    account = x402.accounts.privateKeyToAccount(key);
  } catch {
    throw new CallError(
      "payment",
      "X402_PAYER_KEY is not a valid private key (its value is not shown); nothing was signed",
    );
  }
  const evmClient = new x402.fetch.x402Client();
  // The official registration helper: x402 v2 (eip155:*) and every v1 EVM network name.
  x402.evm.registerExactEvmScheme(evmClient, { signer: account, policies: [policy] });
  return {
    client: evmClient,
    payer: account.address,
    reader: undefined,
    wrap: (fetch) => x402.fetch.wrapFetchWithPayment(fetch, evmClient),
    rpcUrl: undefined,
  };
};
