/**
 * The files of a generated client's fixed part: the payer's guard, which lives in create-agent's own folder
 * (one source, compiled into the CLI for `call` and copied verbatim into every generated client, so
 * create-agent ships these files too), then the client's own templates (templates/client/).
 */
export const CLIENT_GUARD_FILE = "src/caller/guard.ts";

/** The check of a payment about to be sent that every payer family shares (guard-signed.ts). */
export const CLIENT_SIGNED_FILE = "src/caller/guard-signed.ts";

/** The payer's answer reader (guard-read.ts): every answer read up to a size limit. */
export const CLIENT_READ_FILE = "src/caller/guard-read.ts";

/** The payer families' guards (guard-evm.ts, guard-svm.ts) and their registry (payer-families.ts). */
export const CLIENT_FAMILY_FILES = [
  "src/caller/guard-evm.ts",
  "src/caller/guard-svm.ts",
  "src/caller/payer-families.ts",
] as const;

/** The payer's token rule (guard-asset.ts): which token a payer pays in. */
export const CLIENT_ASSET_FILE = "src/caller/guard-asset.ts";

/** The guard's Solana reader and key reader (solana-payer.ts): shared with every client the same way. */
export const CLIENT_SOLANA_FILE = "src/caller/solana-payer.ts";

/** The payer's side of the x402 payment-identifier extension (payment-id.ts): shared the same way. */
export const CLIENT_PAYMENT_ID_FILE = "src/caller/payment-id.ts";

/** Every file of create-agent's own source that goes verbatim into a generated client, in order. */
export const CLIENT_SHARED_FILES = [
  CLIENT_GUARD_FILE,
  CLIENT_SIGNED_FILE,
  CLIENT_READ_FILE,
  ...CLIENT_FAMILY_FILES,
  CLIENT_ASSET_FILE,
  CLIENT_SOLANA_FILE,
  CLIENT_PAYMENT_ID_FILE,
] as const;

/** The fixed part of the client, in the order it goes into the file (templates/client/<name>). */
export const CLIENT_TEMPLATE_FILES = [
  "errors.ts",
  "retry.ts",
  "pay-limit.ts",
  "pay-evm.ts",
  "pay-solana.ts",
  "pay.ts",
  "answer.ts",
  "poll.ts",
  "caller.ts",
] as const;

/** What takes pay-solana.ts's place in a client without Solana payments (same names, no Solana package). */
export const CLIENT_NO_SOLANA_FILE = "pay-solana-none.ts";

/** The fixed part's files for a client that pays on Solana or not, in order. */
export function clientTemplateFiles(solana: boolean): string[] {
  return CLIENT_TEMPLATE_FILES.map((name) =>
    name === "pay-solana.ts" && !solana ? CLIENT_NO_SOLANA_FILE : name,
  );
}
