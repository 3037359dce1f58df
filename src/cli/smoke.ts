/**
 * `create-agent smoke [url]` (a project's `npm run smoke -- <url>`): the deployment checks of
 * src/caller/smoke.ts printed one line each, then with `--pay` one paid job through `call`'s payer
 * (src/caller/call.ts), only when every check passed, and on a mainnet only with `--mainnet`.
 * Exit code 1 when anything failed.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { callCapability } from "../caller/call.js";
import { CallError } from "../caller/errors.js";
import type { PaymentOffer } from "../caller/guard.js";
import { networkFamily, networkId } from "../caller/payer-families.js";
import { PAYER_KEY_VARIABLE } from "../caller/payment.js";
import { isUrl } from "../caller/service.js";
import { type SmokeCheck, smokeChecks, type SmokeReport } from "../caller/smoke.js";
import { isTestnet, readExpectations, shownNetwork } from "../caller/smoke-expect.js";
import { SOLANA_PAYER_KEY_VARIABLE } from "../caller/solana-payment.js";
import { defaultServiceUrl } from "../caller/target.js";
import { CliError } from "./errors.js";

export interface SmokeOptions {
  payTo?: string;
  payToSolana?: string;
  network?: string[];
  settings?: string;
  pay?: boolean;
  mainnet?: boolean;
  cwd?: string;
}

export interface SmokeIo {
  stdout: (text: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

const defaultIo = (): SmokeIo => ({
  stdout: (text) => process.stdout.write(text),
  env: process.env,
  cwd: process.cwd(),
});

const line = (check: SmokeCheck) =>
  `${check.ok ? "ok  " : "FAIL"}  ${check.name}: ${check.detail}\n`;

/** Runs the checks (and the paid job when asked); resolves to the exit code. */
export async function smokeCommand(
  url: string | undefined,
  options: SmokeOptions,
  io: SmokeIo = defaultIo(),
): Promise<number> {
  const root = options.cwd ?? io.cwd;
  const target = url ?? defaultServiceUrl(io.env, root).url;
  if (!isUrl(target))
    throw new CliError(
      `"${target}" is not an http(s) URL: give the deployment's URL, e.g. https://agent.example.com`,
    );
  if (options.settings !== undefined && !existsSync(resolve(root, options.settings)))
    throw new CliError(
      `--settings ${options.settings}: no such file in ${root} (the settings the deployment runs with, e.g. .env.production)`,
    );
  const expected = await readExpectations(options, io.env, root);
  const report = await smokeChecks(target, expected);
  for (const check of report.checks) io.stdout(line(check));
  let failed = report.checks.filter((c) => !c.ok).length;
  if (options.pay) {
    const paid = failed > 0 ? notPaying(failed) : await payOnce(target, report, options, io);
    io.stdout(line(paid));
    if (!paid.ok) failed++;
  }
  io.stdout(`smoke: ${failed === 0 ? "every check passed" : `${failed} failed`} (${target})\n`);
  return failed === 0 ? 0 : 1;
}

const notPaying = (failed: number): SmokeCheck => ({
  ok: false,
  name: "paid job",
  detail: `not attempted: ${failed} check(s) failed, and a misconfigured deployment is never paid; nothing was signed`,
});

/** The offered network `--pay` pays on: the first the payer holds a key for (as `call` chooses). */
function payNetwork(offers: readonly PaymentOffer[], env: NodeJS.ProcessEnv): string | undefined {
  const held = { evm: !!env[PAYER_KEY_VARIABLE], svm: !!env[SOLANA_PAYER_KEY_VARIABLE] };
  return offers
    .map((o) => networkId(o.network))
    .find((n) => {
      const family = networkFamily(n);
      return family !== undefined && held[family];
    });
}

/** One paid job on the checked capability with its example input, through `call`'s payer. */
async function payOnce(
  url: string,
  report: SmokeReport,
  options: SmokeOptions,
  io: SmokeIo,
): Promise<SmokeCheck> {
  const name = "paid job";
  const network = payNetwork(report.offers, io.env);
  if (!network || !report.capability)
    return {
      ok: false,
      name,
      detail: `no payer key for an offered network: set ${PAYER_KEY_VARIABLE} (EVM) or ${SOLANA_PAYER_KEY_VARIABLE} (Solana); nothing was signed`,
    };
  if (!isTestnet(network) && !options.mainnet)
    return {
      ok: false,
      name,
      detail: `${shownNetwork(network)} is not a testnet: a paid smoke job there spends real money; pass --mainnet to pay it; nothing was signed`,
    };
  const input = report.input;
  try {
    const result = await callCapability({
      url,
      capability: report.capability.name,
      ...(typeof input === "object" && input !== null
        ? { input: input as Record<string, unknown> }
        : {}),
      maxPrice: report.capability.price,
      network,
      env: io.env,
      note: () => {},
    });
    const p = result.payment;
    if (!p) return { ok: false, name, detail: "the job ran unpaid (dev mode)" };
    return {
      ok: true,
      name,
      detail: `${report.capability.name} paid ${p.amount} ${p.currency} on ${p.network}, transaction ${p.transaction ?? "(no receipt)"}`,
    };
  } catch (error) {
    const message =
      error instanceof CallError || error instanceof Error ? error.message : String(error);
    return { ok: false, name, detail: message };
  }
}
