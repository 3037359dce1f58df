/**
 * `create-agent dev --paid` (a project's `npm run dev:paid`): a real paid loop with no money and no network.
 * A local anvil chain with Base Sepolia's chain id and Circle's USDC at Base Sepolia's USDC address, a test
 * payer holding USDC, and the server in production mode settling directly on that chain, reloaded on every
 * change as `npm run dev` does (tsx watch, and generate --watch for agent.json). It prints how to pay from a
 * second terminal and from a browser wallet. Ctrl-C stops the server and the chain.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ANVIL_KEYS, DEV_CHAIN_ID, DEV_USDC, devChainTools, startDevChain } from "./dev-chain.js";
import { placeUsdc, usdcBalanceOf } from "./dev-usdc.js";
import { devServerEnv, readDotEnv } from "./dev-paid-env.js";
import { devPort, devProject, ensurePortFree } from "./dev.js";
import { shellQuote } from "./shell-quote.js";

const usdc = (atomic: bigint) => {
  const text = atomic.toString().padStart(7, "0");
  const fraction = text.slice(-6).replace(/0+$/, "");
  return `${text.slice(0, -6)}${fraction ? `.${fraction}` : ""}`;
};

/**
 * The server's environment: production mode, settling on the local chain only. Its payment settings are set
 * here and every other one the environment or .env holds is unset (said so, one line each), so nothing can
 * point it at a real network, token, facilitator or shared ledger (dev-paid-env.ts).
 */
function serverEnv(
  root: string,
  rpcUrl: string,
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
      X402_RPC_URL: rpcUrl,
      X402_SETTLER_KEY: ANVIL_KEYS.settler,
    },
    `anvil at ${rpcUrl}`,
  );
  for (const line of ignored) say(line);
  return Object.assign(env, { PORT: port, NODE_ENV: "production", SERVICE_DEV_MODE: "false" });
}

export async function devPaid(options: { cwd?: string }): Promise<number> {
  const { root, tsx } = devProject(options.cwd);
  const port = devPort(root);
  await ensurePortFree(port);
  const say = (line: string) => process.stdout.write(`${line}\n`);

  const tools = devChainTools(root, say);
  const chain = await startDevChain(tools.anvil);
  let server: ReturnType<typeof spawn> | undefined;
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
  const onSignal = () => stop();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  process.once("exit", () => stop());
  try {
    const { payer, payee } = await placeUsdc(chain.rpcUrl, tools.artifacts);
    say(
      `Local chain: ${chain.rpcUrl} (anvil, chain id ${DEV_CHAIN_ID}); USDC (Circle's FiatTokenV2_2) at ${DEV_USDC}`,
    );
    const env = serverEnv(root, chain.rpcUrl, payee, port, say);
    server = spawn(tsx, ["watch", "src/server.ts"], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "inherit"],
      shell: process.platform === "win32",
    });
    const exited = once(server, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    void exited.then(() => watching.abort());
    let printed = false;
    let seen = "";
    server.stdout!.on("data", (chunk: Buffer) => {
      process.stdout.write(chunk);
      if (printed) return;
      seen += chunk.toString();
      const match = /listening on (http:\/\/[\w.[\]:-]+:(\d+))/.exec(seen);
      if (!match) return;
      printed = true;
      const url = `http://localhost:${match[2]}`;
      void usdcBalanceOf(chain.rpcUrl, payer)
        .then((funds) =>
          say(
            instructions({
              url,
              rpcUrl: chain.rpcUrl,
              payer,
              payee,
              funds,
              calls: callCommands(root),
            }),
          ),
        )
        .catch((error: unknown) =>
          process.stderr.write(`dev:paid: ${String(error)}
`),
        );
    });
    const { watchManifest } = await import("./watch.js");
    const watchCode = await watchManifest(root, { signal: watching.signal });
    stop();
    const [serverCode] = await exited;
    return watchCode || (serverCode ?? 0);
  } finally {
    stop();
    await chain.exited;
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

type Field = Record<string, unknown>;

/** A value of a manifest field: its example, default or first enum value, else one of its type (required parts only). */
function sample(field: Field): unknown {
  if (Array.isArray(field.examples) && field.examples.length > 0) return field.examples[0];
  if (field.default !== undefined) return field.default;
  if (Array.isArray(field.enum) && field.enum.length > 0) return field.enum[0];
  switch (field.type) {
    case "integer":
    case "number":
      return typeof field.minimum === "number" ? field.minimum : 1;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object": {
      const properties = (field.properties ?? {}) as Record<string, Field>;
      const required = Array.isArray(field.required) ? (field.required as string[]) : [];
      return Object.fromEntries(
        Object.entries(properties)
          .filter(([key, sub]) => sub.required === true || required.includes(key))
          .map(([key, sub]) => [key, sample(sub)]),
      );
    }
    default:
      return "hello";
  }
}

/** `npm run call -- <capability> --input field=value ...` for each capability, with sample values of its required fields. */
export function callCommands(root: string): string[] {
  let manifest: {
    capabilities?: Record<string, { input_schema?: Record<string, Record<string, unknown>> }>;
  };
  try {
    manifest = JSON.parse(readFileSync(join(root, "agent.json"), "utf8")) as typeof manifest;
  } catch {
    return [];
  }
  return Object.entries(manifest.capabilities ?? {}).map(([name, capability]) => {
    const inputs = Object.entries(capability.input_schema ?? {})
      .filter(([, field]) => field.required === true)
      .map(([field, schema]) => {
        const value = sample(schema);
        const text = typeof value === "string" ? value : JSON.stringify(value);
        return ` --input ${shellQuote(`${field}=${text}`)}`;
      });
    return `npm run call -- ${name}${inputs.join("")}`;
  });
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
