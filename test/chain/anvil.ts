// Starts a throwaway anvil chain for tests.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { defineChain, type Chain } from "viem";

export interface Anvil {
  rpcUrl: string;
  chainId: number;
  stop(): Promise<void>;
}

// The platform binary itself, not the @foundry-rs/anvil node wrapper: killing a wrapper could orphan anvil.
function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  return join(
    dirname(require.resolve("@foundry-rs/anvil-linux-amd64/package.json")),
    "bin",
    "anvil",
  );
}

/**
 * Seconds between the blocks the kit's chains mine while idle, as Base Sepolia does (a block every 2 s). Anvil
 * alone mines only when a transaction arrives, so an idle chain's `latest` block keeps the time of its last
 * transaction: after 600 s of quiet, every authorization signed with validAfter = now - 600 (the console, the
 * official clients) is "not yet valid" in a check simulated at `latest`. Any interval under 600 s would do;
 * 2 s keeps `latest` within 2 s of the clock, for 30 empty blocks a minute (nothing measurable to anvil).
 * With --mixed-mining a transaction is still mined the moment it arrives.
 */
export const ANVIL_BLOCK_SECONDS = 2;

/**
 * Default 84532 (Base Sepolia's id) so x402 v1 clients, whose network names are a fixed list, can pay as "base-sepolia".
 * The EVM is Prague's (EIP-7702 delegations, as on Base). Blocks come with every transaction and every
 * ANVIL_BLOCK_SECONDS; `keepTime: false` mines only on transactions (a test that must hold a transaction
 * unmined with evm_setAutomine(false), which mixed mining ignores, uses a chain of its own).
 */
export async function startAnvil(
  options: { chainId?: number; keepTime?: boolean; host?: string } = {},
): Promise<Anvil> {
  const chainId = options.chainId ?? 84532;
  // The address to listen on: loopback, unless a test's containers must reach it (a docker bridge gateway).
  const host = options.host ?? "127.0.0.1";
  const interval =
    options.keepTime === false
      ? []
      : ["--block-time", String(ANVIL_BLOCK_SECONDS), "--mixed-mining"];
  // `timeout 2400` bounds anvil's life even if vitest is killed before teardown runs (longer than the
  // whole suite, whose CI limit is 1800 s: one chain serves every project, so it must outlive them). `--silent` would hide the
  // "Listening on" line we need, so run with normal output and keep draining stdout (a full pipe would block anvil).
  const child = spawn(
    "timeout",
    [
      "2400",
      anvilBinary(),
      "--host",
      host,
      "--port",
      "0",
      "--chain-id",
      String(chainId),
      // Prague, pinned: EIP-7702 delegated accounts (type-4 transactions) exist from Prague on, and a pinned
      // hardfork keeps the EVM the tests see from changing with anvil's default ("latest").
      "--hardfork",
      "prague",
      ...interval,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // If the test process ends without calling stop() (a crash, a forgotten teardown), take anvil with it;
  // `timeout` forwards the SIGTERM. And never let anvil's process or pipes keep the test runner alive.
  const killOnExit = () => child.kill("SIGTERM");
  process.once("exit", killOnExit);
  void exited.then(() => process.off("exit", killOnExit));
  child.unref();

  let output = "";
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error("anvil did not start within 15 s")), 15_000);
    function fail(error: Error) {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${error.message}\n${output}`));
    }
    const early = (code: number | null) => fail(new Error(`anvil exited early (code ${code})`));
    child.once("error", fail);
    child.once("exit", early);
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      if (output.length < 100_000) output += chunk.toString();
      const match = new RegExp(`Listening on ${host.replaceAll(".", "\\.")}:(\\d+)`).exec(output);
      if (match) {
        clearTimeout(timer);
        child.off("exit", early); // only this one: `exited` above must still see the real exit
        resolve(Number(match[1]));
      }
    });
  });
  output = ""; // stop buffering; the data listener stays attached and keeps draining the pipe
  for (const pipe of [child.stdout, child.stderr])
    (pipe as unknown as { unref?: () => void }).unref?.();

  const rpcUrl = `http://${host}:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM"); // timeout forwards it
    await exited;
  };
  try {
    await waitForChainId(rpcUrl, chainId);
  } catch (error) {
    await stop();
    throw error;
  }
  return { rpcUrl, chainId, stop };
}

async function waitForChainId(rpcUrl: string, chainId: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const response = await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      });
      const body = (await response.json()) as { result?: string };
      if (body.result !== undefined && Number(body.result) === chainId) return;
    } catch {
      // not ready yet
    }
    if (Date.now() > deadline)
      throw new Error(`anvil at ${rpcUrl} did not answer eth_chainId ${chainId}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A viem chain object for the local anvil chain (x402 and viem need a chain with the right id and RPC URL). */
export function localChain(rpcUrl: string, chainId = 84532): Chain {
  return defineChain({
    id: chainId,
    name: `anvil-${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}
