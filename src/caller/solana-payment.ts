/**
 * Paying on Solana from `create-agent call`: the official x402 client (@x402/fetch) with @x402/svm's exact
 * scheme, @solana/kit for the payer's signer, and the payer guard's Solana reader (solana-payer.ts). Like the
 * EVM client (payment.ts), these are loaded with a dynamic import() only when a Solana offer is taken; a
 * missing one is reported, before anything is signed, with the exact command that installs it.
 */
import { PaymentGuardError } from "./guard.js";
import { networkName, rpcUrlVariable } from "./payer-families.js";
import type { SolanaReader } from "./guard-svm.js";
import { CallError } from "./errors.js";
import { shellQuote } from "../shell-quote.js";
import {
  type CallFamily,
  loadFailure,
  toolRoot,
  type X402Client,
  type X402Requirement,
} from "./payment.js";
import {
  solanaKeyBytes,
  solanaReader,
  type SolanaKitModule,
  type SolanaTokenModule,
} from "./solana-payer.js";
import { callerDependencies, solanaCallerDependencies } from "../versions.js";

export const SOLANA_PAYER_KEY_VARIABLE = "SOLANA_PAYER_KEY";

/** A @solana/kit key pair signer, as the exact SVM scheme signs with it. */
export interface SolanaSigner {
  address: string;
}

/** The x402 client, with the registration calls a Solana payer makes itself (the RPC URL is per scheme). */
export interface SolanaX402Client extends X402Client {
  register(network: string, scheme: object): unknown;
  registerV1(network: string, scheme: object): unknown;
  registerPolicy(
    policy: (version: number, requirements: X402Requirement[]) => X402Requirement[],
  ): unknown;
}

/** An exact SVM scheme class: it takes the signer createKeyPairSignerFromBytes made (typed there, not here). */
type SvmSchemeClass = new (signer: never, config?: { rpcUrl?: string }) => object;

/** What create-agent uses of @x402/svm and @solana/kit, typed here (see payment.ts X402Modules). */
export interface SolanaModules {
  fetch: {
    x402Client: new () => SolanaX402Client;
    wrapFetchWithPayment(
      fetch: typeof globalThis.fetch,
      client: SolanaX402Client,
    ): typeof globalThis.fetch;
  };
  svm: { ExactSvmScheme: SvmSchemeClass };
  svmV1: { ExactSvmSchemeV1: SvmSchemeClass };
  kit: SolanaKitModule & {
    getBase58Encoder(): { encode(value: string): ArrayLike<number> };
    createKeyPairSignerFromBytes(bytes: Uint8Array): Promise<SolanaSigner>;
  };
  token: SolanaTokenModule;
  reader: SolanaReader;
}

/** `npm install --no-save @x402/fetch@… @x402/svm@… @solana/kit@… @solana-program/token@…` */
export function solanaInstallCommand(): string {
  const packages = [
    `@x402/fetch@${callerDependencies["@x402/fetch"]}`,
    ...Object.entries(solanaCallerDependencies).map(([name, version]) => `${name}@${version}`),
  ];
  return `npm install --no-save ${packages.join(" ")}`;
}

/** Loads the official Solana payer, or says exactly how to install it (before anything is signed). */
export async function loadSolana(
  importer: (specifier: string) => Promise<unknown> = (specifier) => import(specifier),
): Promise<SolanaModules> {
  try {
    const [fetchModule, svm, svmV1, kit, token] = await Promise.all([
      importer("@x402/fetch"),
      importer("@x402/svm/exact/client"),
      importer("@x402/svm/exact/v1/client"),
      importer("@solana/kit"),
      importer("@solana-program/token"),
    ]);
    const modules = {
      fetch: fetchModule,
      svm,
      svmV1,
      kit,
      token,
    } as Omit<SolanaModules, "reader">;
    return { ...modules, reader: solanaReader(modules.kit, modules.token) };
  } catch (error) {
    const detail = loadFailure(error);
    throw new CallError(
      "payment",
      `this service is to be paid on Solana, and the x402 client create-agent pays Solana with (@x402/fetch, @x402/svm, @solana/kit, @solana-program/token) ${detail}; nothing was signed. Install it in the create-agent folder:\n  cd ${shellQuote(toolRoot())} && ${solanaInstallCommand()}`,
    );
  }
}

/**
 * The payer's Solana key as set in SOLANA_PAYER_KEY (the environment only: never a flag, never printed);
 * throws, naming the variable, when it is not set. `why` says what asked for payment.
 */
export function solanaKeyText(env: NodeJS.ProcessEnv, why: string): string {
  const text = env[SOLANA_PAYER_KEY_VARIABLE];
  if (text === undefined || text === "")
    throw new CallError(
      "payment",
      `${why}, and ${SOLANA_PAYER_KEY_VARIABLE} is not set: put the payer's Solana secret key (base58, or the JSON byte array solana-keygen writes) in the environment variable ${SOLANA_PAYER_KEY_VARIABLE} to pay on Solana; nothing was signed`,
    );
  return text;
}

/** The payer's Solana signer from the key's text (see solanaKeyText); the message never shows the key. */
export async function solanaSigner(modules: SolanaModules, text: string): Promise<SolanaSigner> {
  try {
    const bytes = solanaKeyBytes(text, SOLANA_PAYER_KEY_VARIABLE, modules.kit.getBase58Encoder());
    return await modules.kit.createKeyPairSignerFromBytes(bytes);
  } catch (error) {
    throw new CallError(
      "payment",
      error instanceof PaymentGuardError
        ? error.message
        : `${SOLANA_PAYER_KEY_VARIABLE} is not a valid Solana key pair: its public half does not match its secret (its value is not shown); nothing was signed`,
    );
  }
}

/** The RPC endpoint the Solana client reads the mint and a blockhash from: X402_RPC_URL_<NET>, else undefined (the official client's public endpoint). */
export function solanaRpcUrl(env: NodeJS.ProcessEnv, network: string): string | undefined {
  const value = env[rpcUrlVariable(network)];
  return value ? value : undefined;
}

/**
 * `text` without the credentials of `url` (an RPC URL may hold a user and password, a key in its query or
 * path): the URL itself as its origin, and each of its secret parts as "[redacted]". The x402 client's and
 * fetch's messages may repeat the URL they were given.
 */
export function hideUrlSecrets(text: string, url: string | undefined): string {
  if (url === undefined || !URL.canParse(url)) return text;
  const u = new URL(url);
  let out = text.replaceAll(url, u.origin).replaceAll(u.href, u.origin);
  const parts = [u.username, u.password, ...[...u.searchParams].map(([, v]) => v)];
  for (const segment of u.pathname.split("/")) if (segment.length >= 16) parts.push(segment);
  for (const part of parts.filter((p) => p.length >= 4).sort((a, b) => b.length - a.length)) {
    out = out.replaceAll(part, "[redacted]");
    const decoded = (() => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    })();
    out = out.replaceAll(decoded, "[redacted]");
  }
  return out;
}

/** The Solana family: SOLANA_PAYER_KEY and the official exact SVM scheme client, on the chosen network only. */
export const SVM_CALL: CallFamily = async (network, policy, env, why, importer) => {
  const keyText = solanaKeyText(env, why);
  const solana = await loadSolana(importer);
  const signer = await solanaSigner(solana, keyText);
  const rpcUrl = solanaRpcUrl(env, network);
  const config = rpcUrl ? { rpcUrl } : undefined;
  const svmClient = new solana.fetch.x402Client();
  // The official exact SVM scheme, on the chosen network only, reading it through its own RPC.
  svmClient.register(network, new solana.svm.ExactSvmScheme(signer as never, config));
  const v1Name = networkName(network);
  if (v1Name)
    svmClient.registerV1(v1Name, new solana.svmV1.ExactSvmSchemeV1(signer as never, config));
  svmClient.registerPolicy(policy);
  return {
    client: svmClient,
    payer: signer.address,
    reader: solana.reader,
    wrap: (fetch) => solana.fetch.wrapFetchWithPayment(fetch, svmClient),
    rpcUrl,
  };
};
