/**
 * What `create-agent smoke` expects of a deployment: the seller's own configuration, read as the server
 * reads it (the environment over the project's .env, or the file `--settings` names), with the command's
 * flags over both; the prices of the project's agent.json. Also which networks are testnets: paying anywhere else needs --mainnet.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { readDotEnv } from "../dot-env.js";
import { NETWORK_USDC } from "./guard-asset.js";
import { networkFamily, networkId, networkName } from "./payer-families.js";
import { readService, type ServiceDescription } from "./service.js";

/** Networks known to carry no real money (CAIP-2). Any other network is paid only with --mainnet. */
const TESTNETS = new Set([
  "eip155:84532", // base-sepolia (and dev:paid's local chain)
  "eip155:421614", // arbitrum-sepolia
  "eip155:11155111", // ethereum sepolia
  "eip155:80002", // polygon amoy
  "eip155:43113", // avalanche fuji
  "eip155:31337", // anvil, hardhat
  "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", // solana-devnet
]);

export function isTestnet(network: string): boolean {
  return TESTNETS.has(networkId(network));
}

/** A network as a person reads it: its name and CAIP-2 id when it has a name. */
export function shownNetwork(network: string): string {
  const name = networkName(network);
  const id = networkId(network);
  return name && name !== id ? `${name} (${id})` : id;
}

export interface SmokeFlags {
  /** `--pay-to`: the payee expected of EVM offers (else PAY_TO). */
  payTo?: string;
  /** `--pay-to-solana`: the payee expected of Solana offers (else PAY_TO_SOLANA). */
  payToSolana?: string;
  /** `--network`, repeatable: the networks expected, in order (else X402_NETWORKS / X402_NETWORK). */
  network?: string[];
  /** `--settings`: the settings file read under the environment (else .env), relative to the project. */
  settings?: string;
}

/** One expected value and where it came from (a flag or a setting), to name it in a failure. */
export interface Expected<T> {
  value: T;
  from: string;
}

export interface SmokeExpectations {
  /** CAIP-2 ids, in the seller's order. */
  networks?: Expected<string[]>;
  payTo: { evm?: Expected<string>; svm?: Expected<string> };
  /** The token expected on a network (CAIP-2): its own setting, X402_ASSET (EVM), else its USDC. */
  asset(network: string): Expected<string> | undefined;
  /** The project's capabilities and prices (its agent.json), when there is one. */
  manifest?: ServiceDescription;
}

/** The expectations from `flags`, `env` and the project at `root` (its .env and agent.json). */
export async function readExpectations(
  flags: SmokeFlags,
  env: NodeJS.ProcessEnv,
  root: string,
): Promise<SmokeExpectations> {
  const fileName = flags.settings ?? ".env";
  const dotEnv = readDotEnv(root, fileName);
  const setting = (name: string): Expected<string> | undefined => {
    const value = env[name] !== undefined && env[name] !== "" ? env[name] : dotEnv[name];
    if (value === undefined || value.trim() === "") return undefined;
    const where = env[name] !== undefined && env[name] !== "" ? "the environment" : fileName;
    return { value: value.trim(), from: `${name} (${where})` };
  };
  const flag = (value: string | undefined, name: string) =>
    value === undefined ? undefined : { value, from: name };
  const listed = setting("X402_NETWORKS") ?? setting("X402_NETWORK");
  const networks = flags.network?.length
    ? { value: flags.network.map(networkId), from: "--network" }
    : listed && {
        value: listed.value.split(",").flatMap((n) => (n.trim() ? [networkId(n.trim())] : [])),
        from: listed.from,
      };
  const suffix = (network: string) =>
    (networkName(network) ?? network).toUpperCase().replace(/[^A-Z0-9]/g, "_");
  const asset = (network: string): Expected<string> | undefined => {
    const own = setting(`X402_ASSET_${suffix(network)}`);
    if (own) return own;
    const global = networkFamily(network) === "evm" ? setting("X402_ASSET") : undefined;
    if (global) return global;
    const usdc = NETWORK_USDC[networkId(network)];
    return usdc === undefined
      ? undefined
      : { value: usdc, from: `the USDC of ${shownNetwork(network)}` };
  };
  const manifestPath = join(root, "agent.json");
  return {
    ...(networks ? { networks } : {}),
    payTo: {
      ...optional("evm", flag(flags.payTo, "--pay-to") ?? setting("PAY_TO")),
      ...optional("svm", flag(flags.payToSolana, "--pay-to-solana") ?? setting("PAY_TO_SOLANA")),
    },
    asset,
    ...(existsSync(manifestPath) ? { manifest: await readService(manifestPath) } : {}),
  };
}

function optional<K extends string, T>(key: K, value: T | undefined): Partial<Record<K, T>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, T>);
}
