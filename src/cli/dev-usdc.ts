/**
 * Circle's USDC on the local chain of `create-agent dev --paid` (dev-chain.ts starts it): FiatTokenV2_2
 * deployed and initialized as Circle does, copied to Base Sepolia's USDC address, and the test payer funded.
 * Like dev-chain.ts, it sends nothing to a chain that is not the local anvil one.
 */
import { CliError } from "./errors.js";
import {
  ANVIL_KEYS,
  assertLoopback,
  DEV_CHAIN_ID,
  DEV_USDC,
  load,
  PAYER_FUNDS,
  type Untyped,
} from "./dev-chain.js";

type Abi = readonly unknown[];

interface Artifact {
  abi: readonly unknown[];
  bytecode: `0x${string}`;
  linkReferences: Record<string, Record<string, Array<{ start: number; length: number }>>>;
}

/** viem's clients on the local chain, the settler's wallet, and a wait for a successful receipt. */
interface LocalChain {
  viem: Untyped;
  probe: Untyped;
  publicClient: Untyped;
  wallet: Untyped;
  confirm: (hash: `0x${string}`, what: string) => Promise<Untyped>;
}

/**
 * Circle's FiatTokenV2_2 at {@link DEV_USDC}, initialized as Circle deploys it (the settler account holds every
 * role and mints), and `PAYER_FUNDS` minted to the payer. Refused unless `rpcUrl` is loopback and answers as
 * anvil with chain id 84532.
 */
export async function placeUsdc(
  rpcUrl: string,
  artifacts: (file: string) => unknown,
): Promise<{ payer: `0x${string}`; payee: `0x${string}` }> {
  const chain = await localChain(rpcUrl);
  const { privateKeyToAccount } = await load("viem/accounts");
  const payer = privateKeyToAccount(ANVIL_KEYS.payer).address;
  const payee = privateKeyToAccount(ANVIL_KEYS.payee).address;
  const token = artifacts("v2/FiatTokenV2_2.sol/FiatTokenV2_2.json") as Artifact;
  const existing = await chain.publicClient.getCode({ address: DEV_USDC });
  if (!existing || existing === "0x") await deployUsdc(chain, token, artifacts);
  await chain.confirm(
    await chain.wallet.writeContract({
      address: DEV_USDC,
      abi: token.abi as Abi,
      functionName: "mint",
      args: [payer, PAYER_FUNDS],
    }),
    "minting the payer's USDC",
  );
  return { payer, payee };
}

/** The clients, once `rpcUrl` is known to be loopback and to answer as anvil on chain 84532. */
async function localChain(rpcUrl: string): Promise<LocalChain> {
  assertLoopback(rpcUrl);
  const viem = await load("viem");
  const { privateKeyToAccount } = await load("viem/accounts");
  const transport = viem.http(rpcUrl);
  const probe = viem.createPublicClient({ transport });
  const client = (await probe.request({ method: "web3_clientVersion" } as never)) as string;
  const chainId = await probe.getChainId();
  if (!/anvil/i.test(client) || chainId !== DEV_CHAIN_ID)
    throw new CliError(
      `${rpcUrl} is ${client} on chain ${chainId}, not the local anvil chain: nothing was sent`,
    );
  const chain = viem.defineChain({
    id: DEV_CHAIN_ID,
    name: "Local chain (dev:paid)",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const publicClient = viem.createPublicClient({ chain, transport, pollingInterval: 20 });
  const wallet = viem.createWalletClient({
    account: privateKeyToAccount(ANVIL_KEYS.settler),
    chain,
    transport,
    pollingInterval: 20,
  });
  const confirm = async (hash: `0x${string}`, what: string) => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== "success") throw new CliError(`${what} reverted (tx ${hash})`);
    return receipt;
  };
  return { viem, probe, publicClient, wallet, confirm };
}

/** Deploys the token (its SignatureChecker library linked in), copies it to DEV_USDC, initializes it there. */
async function deployUsdc(
  { viem, probe, publicClient, wallet, confirm }: LocalChain,
  token: Artifact,
  artifacts: (file: string) => unknown,
): Promise<void> {
  const abi = token.abi as Abi;
  const library = artifacts("util/SignatureChecker.sol/SignatureChecker.json") as Artifact;
  const libraryAt = (
    await confirm(
      await wallet.deployContract({ abi: library.abi as Abi, bytecode: library.bytecode }),
      "deploying SignatureChecker",
    )
  ).contractAddress!;
  // Link the library into the token's bytecode at each of its references.
  let code = token.bytecode.slice(2);
  for (const refs of Object.values(token.linkReferences))
    for (const list of Object.values(refs))
      for (const { start, length } of list)
        code =
          code.slice(0, start * 2) +
          libraryAt.slice(2).toLowerCase() +
          code.slice((start + length) * 2);
  const deployed = (
    await confirm(
      await wallet.deployContract({ abi, bytecode: `0x${code}` }),
      "deploying FiatTokenV2_2",
    )
  ).contractAddress!;
  // FiatTokenV2_2 computes its EIP-712 domain from address(this): its code copied to Base Sepolia's USDC
  // address and initialized there is a complete USDC at the address clients know.
  const runtime = await publicClient.getCode({ address: deployed });
  await probe.request({ method: "anvil_setCode", params: [DEV_USDC, runtime] } as never);
  const admin = wallet.account.address;
  const calls: Array<[string, readonly unknown[]]> = [
    ["initialize", ["USDC", "USDC", "USD", 6, admin, admin, admin, admin]],
    ["initializeV2", ["USDC"]],
    ["initializeV2_1", [admin]],
    ["initializeV2_2", [[], "USDC"]],
    ["configureMinter", [admin, viem.maxUint256]],
  ];
  for (const [functionName, args] of calls)
    await confirm(
      await wallet.writeContract({ address: DEV_USDC, abi, functionName, args }),
      functionName,
    );
}

/** USDC balance (atomic units) of `address` on the local chain. */
export async function usdcBalanceOf(rpcUrl: string, address: `0x${string}`): Promise<bigint> {
  assertLoopback(rpcUrl);
  const viem = await load("viem");
  const client = viem.createPublicClient({ transport: viem.http(rpcUrl) });
  return await client.readContract({
    address: DEV_USDC,
    abi: viem.erc20Abi,
    functionName: "balanceOf",
    args: [address],
  });
}
