/**
 * `create-agent dev --paid` (a project's `npm run dev:paid`): a real paid loop with no money and no network.
 * A local anvil chain with Base Sepolia's chain id and Circle's USDC at Base Sepolia's USDC address, a test
 * payer holding USDC, and the server in production mode settling on that chain: through the official x402
 * facilitator run inside this process (dev-facilitator.ts), or directly in a project with the `onchain`
 * feature. The server is reloaded on every change as `npm run dev` does (tsx watch, and generate --watch for
 * agent.json). It prints how to pay from a second terminal and from a browser wallet. Ctrl-C stops the
 * server, the chain and the facilitator (closed when this command returns).
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { onStopSignals } from "../stop-signals.js";
import { ANVIL_KEYS, DEV_CHAIN_ID, DEV_USDC, devChainTools, startDevChain } from "./dev-chain.js";
import { placeUsdc, usdcBalanceOf } from "./dev-usdc.js";
import { devServerEnv, readDotEnv } from "./dev-paid-env.js";
import {
  type FacilitatorModules,
  hasOnchain,
  loadFacilitator,
  startDevFacilitator,
} from "./dev-facilitator.js";
import { devPort, devProject, ensurePortFree } from "./dev.js";
import { callInputWords } from "../generate/sample-values.js";
import { parseManifest } from "../manifest/index.js";
import type { AgentModel } from "../manifest/model.js";

const usdc = (atomic: bigint) => {
  const text = atomic.toString().padStart(7, "0");
  const fraction = text.slice(-6).replace(/0+$/, "");
  return `${text.slice(0, -6)}${fraction ? `.${fraction}` : ""}`;
};

/**
 * The server's environment: production mode, settling on the local chain only (`settles`: directly, or
 * through dev:paid's own facilitator). Its payment settings are set here and every other one the
 * environment or .env holds is unset (said so, one line each), so nothing can point it at a real network,
 * token, facilitator or shared ledger (dev-paid-env.ts).
 */
function serverEnv(
  root: string,
  rpcUrl: string,
  settles: Record<string, string>,
  payee: string,
  port: string | number,
  say: (line: string) => void,
): NodeJS.ProcessEnv {
  const { env, ignored } = devServerEnv(
    process.env,
    readDotEnv(root),
    {
      PAY_TO: payee,
      X402_NETWORK: "base-sepolia",
      X402_ASSET: DEV_USDC,
      X402_ASSET_NAME: "USDC",
      X402_ASSET_VERSION: "2",
      ...settles,
    },
    `anvil at ${rpcUrl}`,
  );
  for (const line of ignored) say(line);
  return Object.assign(env, { PORT: port, NODE_ENV: "production", SERVICE_DEV_MODE: "false" });
}

/** How the server settles on the local chain: its settings, a line saying so, and what stops with dev:paid. */
export interface Settlement {
  settings: Record<string, string>;
  line: string;
  stop(): Promise<void>;
}

/**
 * With the `onchain` feature the server settles itself (X402_RPC_URL, X402_SETTLER_KEY); without it,
 * through the official x402 facilitator run here on 127.0.0.1 (X402_FACILITATOR_URL). Either way anvil's
 * account 0 submits the transfers and pays the gas.
 */
export async function devSettlement(
  rpcUrl: string,
  facilitator: FacilitatorModules | undefined,
): Promise<Settlement> {
  if (facilitator === undefined)
    return {
      settings: { X402_RPC_URL: rpcUrl, X402_SETTLER_KEY: ANVIL_KEYS.settler },
      line: "Settlement: by the server itself (the onchain feature), from anvil account 0",
      stop: async () => {},
    };
  const local = await startDevFacilitator(facilitator, rpcUrl, ANVIL_KEYS.settler);
  return {
    settings: { X402_FACILITATOR_URL: local.url },
    line: `Settlement: the official x402 facilitator (@x402/core, @x402/evm) run by dev:paid at ${local.url}, from anvil account 0`,
    stop: local.stop,
  };
}

/** `tsx watch src/server.ts` with `env`; `onListening` gets its URL once it listens (its output goes on to ours). */
function startServer(
  root: string,
  tsx: string,
  env: NodeJS.ProcessEnv,
  onListening: (url: string) => void,
) {
  const server = spawn(tsx, ["watch", "src/server.ts"], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "inherit"],
    shell: process.platform === "win32",
  });
  const exited = once(server, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  let seen: string | undefined = "";
  server.stdout!.on("data", (chunk: Buffer) => {
    process.stdout.write(chunk);
    if (seen === undefined) return;
    seen += chunk.toString();
    const match = /listening on (http:\/\/[\w.[\]:-]+:(\d+))/.exec(seen);
    if (!match) return;
    seen = undefined;
    onListening(`http://localhost:${match[2]}`);
  });
  return { server, exited };
}

/** The facilitator's packages when the project lacks `onchain` (loaded before anything starts), else undefined. */
async function facilitatorFor(root: string): Promise<FacilitatorModules | undefined> {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as unknown;
  return hasOnchain(pkg, (path) => existsSync(join(root, path)))
    ? undefined
    : await loadFacilitator();
}

export async function devPaid(options: { cwd?: string }): Promise<number> {
  const { root, tsx } = devProject(options.cwd);
  const port = devPort(root);
  await ensurePortFree(port);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const facilitator = await facilitatorFor(root);

  const tools = devChainTools(root);
  const chain = await startDevChain(tools.anvil);
  let server: ReturnType<typeof spawn> | undefined;
  let settles: Settlement | undefined;
  const watching = new AbortController();
  let stopping = false;
  const stop = (signal: NodeJS.Signals = "SIGTERM") => {
    if (stopping) return;
    stopping = true;
    watching.abort();
    if (server && server.exitCode === null && server.signalCode === null) server.kill(signal);
    if (chain.child.exitCode === null && chain.child.signalCode === null)
      chain.child.kill("SIGTERM");
  };
  const offSignals = onStopSignals(() => stop());
  process.once("exit", () => stop());
  try {
    const { payer, payee } = await placeUsdc(chain.rpcUrl, tools.artifacts);
    say(
      `Local chain: ${chain.rpcUrl} (anvil, chain id ${DEV_CHAIN_ID}); USDC (Circle's FiatTokenV2_2) at ${DEV_USDC}`,
    );
    settles = await devSettlement(chain.rpcUrl, facilitator);
    say(settles.line);
    const env = serverEnv(root, chain.rpcUrl, settles.settings, payee, port, say);
    const started = startServer(root, tsx, env, (url) =>
      printInstructions({ root, url, rpcUrl: chain.rpcUrl, payer, payee }, say),
    );
    server = started.server;
    void started.exited.then(() => watching.abort());
    const { watchManifest } = await import("./watch.js");
    const watchCode = await watchManifest(root, { signal: watching.signal });
    stop();
    const [serverCode] = await started.exited;
    return watchCode || (serverCode ?? 0);
  } finally {
    stop();
    await settles?.stop();
    await chain.exited;
    offSignals();
  }
}

/** Prints how to pay, with the payer's funds as the chain holds them now. */
function printInstructions(
  o: { root: string; url: string; rpcUrl: string; payer: `0x${string}`; payee: string },
  say: (line: string) => void,
): void {
  void usdcBalanceOf(o.rpcUrl, o.payer)
    .then((funds) => say(instructions({ ...o, funds, calls: callCommands(o.root) })))
    .catch((error: unknown) => process.stderr.write(`dev:paid: ${String(error)}\n`));
}

/** `npm run call -- <capability> --input field=value ...` for each capability, with sample values of its required fields. */
export function callCommands(root: string): string[] {
  let model: AgentModel;
  try {
    model = parseManifest(readFileSync(join(root, "agent.json"), "utf8"), "agent.json");
  } catch {
    return [];
  }
  return model.capabilities.map((capability) =>
    ["npm run call --", capability.name, ...callInputWords(capability.inputSchema)].join(" "),
  );
}

function instructions(o: {
  url: string;
  rpcUrl: string;
  payer: string;
  payee: string;
  funds: bigint;
  calls: string[];
}): string {
  return [
    "",
    "=== dev:paid: real x402 payments on a local chain, no money, no network ===",
    `Agent:  ${o.url}  (production mode: every job is paid; open it in a browser for the console)`,
    `Payee:  ${o.payee}  (PAY_TO, anvil account 2)`,
    `Payer:  ${o.payer}  holds ${usdc(o.funds)} test USDC`,
    `        key ${ANVIL_KEYS.payer}`,
    "        (anvil's well-known PUBLIC test key: known to everyone, never use it on a real network)",
    "",
    "Pay from a second terminal, in this folder:",
    ...(o.calls.length > 0
      ? o.calls
      : ["npm run call -- <capability> --input <field>=<value>"]
    ).map((call) => `  AGENT_URL=${o.url} X402_PAYER_KEY=${ANVIL_KEYS.payer} ${call}`),
    "",
    "Pay from a browser wallet (e.g. MetaMask): add a network by hand, do not edit Base Sepolia's own entry,",
    `  name "Local dev:paid", RPC URL ${o.rpcUrl}, chain id ${DEV_CHAIN_ID}, currency ETH;`,
    "  import the payer's key above into a separate account, switch to that network, then open the agent's URL.",
    "  (The chain id is Base Sepolia's so that x402 clients pay it as-is: keep the two networks apart in the wallet.)",
    "",
    "Ctrl-C stops the server and the chain.",
    "",
  ].join("\n");
}
