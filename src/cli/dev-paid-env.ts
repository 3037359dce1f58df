/**
 * The environment of `dev:paid`'s server: production mode settling on the local chain, and nothing else.
 * Every setting that says where or how to settle (any X402_* and PAY_TO* setting, a facilitator's
 * credentials, the Solana fee payer, a shared Redis ledger, PUBLIC_URL), whether it comes from the
 * environment or the project's .env, is replaced by dev:paid's own value (its chain's RPC and settler key,
 * or the URL of the facilitator it runs on 127.0.0.1) or unset (an empty value: the server's .env loader
 * never fills in a variable that is set), with one line saying so for each one the user had set. Left
 * alone: the caller's key (X402_PAYER_KEY, which the server never reads) and the two timeouts, which
 * change no destination.
 */
import { readDotEnv } from "../dot-env.js";

/** Settings that point a server at a chain, a token, a facilitator, a payee or a shared ledger. */
const FOREIGN =
  /^(X402_.+|PAY_TO.*|CDP_API_KEY_ID|CDP_API_KEY_SECRET|SOLANA_FEE_PAYER_KEY|REDIS_URL|REDIS_KEY_PREFIX|PUBLIC_URL)$/;
/** Kept as the user set them: they change no destination. */
const KEPT = new Set(["X402_PAYER_KEY", "X402_SETTLE_TIMEOUT_SECONDS", "X402_MAX_TIMEOUT_SECONDS"]);

export { readDotEnv };

export interface DevServerEnv {
  env: NodeJS.ProcessEnv;
  /** One line per setting of the user's that dev:paid ignores. */
  ignored: string[];
}

/**
 * The server's environment: `base` (the caller's) with dev:paid's `own` settings over it, and every other
 * foreign setting found in `base` or `dotEnv` unset. `chain` names the local chain in the lines.
 */
export function devServerEnv(
  base: NodeJS.ProcessEnv,
  dotEnv: Record<string, string>,
  own: Record<string, string>,
  chain: string,
): DevServerEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  const ignored: string[] = [];
  const names = new Set([...Object.keys(base), ...Object.keys(dotEnv), ...Object.keys(own)]);
  for (const name of [...names].sort()) {
    if (!FOREIGN.test(name) || KEPT.has(name)) continue;
    const wanted = own[name] ?? "";
    const fromEnv = base[name];
    const from = fromEnv !== undefined && fromEnv !== "" ? "the environment" : ".env";
    const theirs = fromEnv !== undefined ? fromEnv : dotEnv[name];
    env[name] = wanted;
    if (theirs === undefined || theirs === "" || theirs === wanted) continue;
    ignored.push(
      `dev:paid: ignoring ${name} from ${from}: the local loop settles only on its own chain (${chain})` +
        (wanted === "" ? "" : `, with its own ${name}`),
    );
  }
  return { env, ignored };
}
