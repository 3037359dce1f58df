/**
 * Checks that need the chain (only when X402_RPC_URL is set): the payer's USDC balance, whether
 * the authorization's nonce is still unused, and EIP-1271 signatures of smart-contract wallets.
 * Part of the `onchain` feature, loaded on first use (../scheme.ts): the full viem package adds
 * ~100 ms to startup.
 * Part of your project: edit freely.
 */
import { InternalError, PaymentError } from "../../../errors.js";
import type { ResolvedNetwork } from "../../networks.js";
import type { VerifiedPayment } from "../../../types.js";
import type { ChainChecks } from "../chain.js";
import { loadViem, type Chain, type Hex, type TransferArgs } from "./viem.js";
import { USDC_ABI } from "./usdc-abi.js";

export { USDC_ABI };
import { transferTypedData } from "../../x402.js";

// viem, typed by what this file uses (see viem.ts: its declarations stay out of your type-check).
const { BaseError, ContractFunctionRevertedError, createPublicClient, defineChain, http } =
  await loadViem();

/** Blocks a settlement transaction must be deep before a reconciled one counts as paid. */
export const RECONCILE_CONFIRMATIONS = 1n;
/** How far back (blocks) a settlement never recorded is looked for (hours on L2s). */
const USED_BY_BLOCKS = 10_000n;
type Paid = { payTo: Hex; amount: bigint };
/** Seconds past validBefore after which an unused authorization can no longer be mined (block time skew). */
const RECONCILE_CONFIRMATIONS_SECONDS = 30;

/** The arguments of USDC's `transferWithAuthorization(from, to, value, validAfter, validBefore, nonce, signature)`. */
export function transferArgs(p: VerifiedPayment): TransferArgs {
  const a = p.authorization;
  return [
    a.from,
    a.to,
    BigInt(a.value),
    BigInt(a.validAfter),
    BigInt(a.validBefore),
    a.nonce,
    p.signature,
  ] as const;
}

/** A viem chain for our network, served by the configured RPC endpoint. */
export function chainFor(network: ResolvedNetwork, rpcUrl: string): Chain {
  return defineChain({
    id: network.chainId,
    name: network.caip2,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

/** viem's summary of an error on one line; unlike `message` it never contains the RPC URL. */
export function shortMessage(err: unknown): string {
  const text =
    err instanceof BaseError ? err.shortMessage : err instanceof Error ? err.message : String(err);
  return text.replace(/\s+/g, " ").trim();
}

/** What a revert reason of FiatTokenV2_2 means for the payer, and the refusal code metrics count it by. */
const KNOWN_REVERTS: Array<[RegExp, string, string]> = [
  [
    /blacklisted/i,
    "blacklisted",
    "the token has blacklisted an account of this transfer; pay from another account",
  ],
  [/paused/i, "token_paused", "the token is paused by its issuer; try again once it is unpaused"],
  [
    /invalid signature/i,
    "signature",
    "the token rejects the signature (a delegated or contract account must implement EIP-1271)",
  ],
  [/used or canceled/i, "nonce_used", "sign a new authorization with a fresh nonce"],
  [
    /not yet valid/i,
    "not_yet_valid",
    "wait until validAfter has passed, or sign a new authorization",
  ],
  [/expired/i, "expired", "sign a new authorization"],
  [/exceeds balance/i, "insufficient_funds", "fund the account or pay from another"],
];

export function createChainChecks(rpcUrl: string, network: ResolvedNetwork): ChainChecks {
  const client = createPublicClient({ chain: chainFor(network, rpcUrl), transport: http(rpcUrl) });

  /** A transaction's receipt; undefined while it is not mined (or unknown to the node). */
  const receiptOf = (hash: Hex) =>
    client.getTransactionReceipt({ hash }).catch((err: unknown) => {
      if ((err as Error).name === "TransactionReceiptNotFoundError") return undefined;
      throw err;
    });

  // A wrong X402_RPC_URL (another chain) would make every check meaningless: verify the chain id
  // once, retrying after a failure.
  let chainChecked: Promise<void> | undefined;
  const ensureChain = (): Promise<void> =>
    (chainChecked ??= client.getChainId().then(
      (id) => {
        if (id !== network.chainId)
          throw new InternalError(
            `X402_RPC_URL serves chain ${id}, but X402_NETWORK is ${network.caip2}: point it at a ${network.caip2} node`,
          );
      },
      (err: unknown) => {
        chainChecked = undefined;
        throw err;
      },
    ));

  /** RPC failures are refusals the client can retry; details stay in our log. */
  const rpc = async <T,>(what: string, work: () => Promise<T>): Promise<T> => {
    try {
      await ensureChain();
      return await work();
    } catch (err) {
      if (err instanceof InternalError) throw err;
      throw new PaymentError(
        `could not ${what} on chain (${shortMessage(err)}), so the job was not run; try again later`,
        { cause: err, code: "chain_unavailable" },
      );
    }
  };

  /**
   * No transaction recorded (its sender died before saying: jobs/stored-answer.ts): the one that used
   * the authorization (USDC's AuthorizationUsed, in recent blocks) counts only if it also paid the
   * amount to us (Transfer in the same transaction): the payer could have used the nonce itself.
   */
  async function usedBy(from: Hex, nonce: Hex, paid: Paid): Promise<Hex | undefined> {
    const latest = await client.getBlockNumber();
    const [used] = await client.getContractEvents({
      address: network.asset,
      abi: USDC_ABI,
      eventName: "AuthorizationUsed",
      args: { authorizer: from, nonce },
      fromBlock: latest > USED_BY_BLOCKS ? latest - USED_BY_BLOCKS : 0n,
    });
    if (!used?.transactionHash || used.blockNumber === null) return undefined;
    const transfers = await client.getContractEvents({
      address: network.asset,
      abi: USDC_ABI,
      eventName: "Transfer",
      args: { from, to: paid.payTo },
      fromBlock: used.blockNumber,
      toBlock: used.blockNumber,
    });
    const pays = transfers.some(
      (t) => t.transactionHash === used.transactionHash && t.args.value === paid.amount,
    );
    return pays ? used.transactionHash : undefined;
  }

  return {
    async contractSignature(auth, signature) {
      const from = auth.from;
      const code = await rpc("check the payer's account", () => client.getCode({ address: from }));
      if (code === undefined || code === "0x") return "eoa";
      const valid = await rpc("verify the contract wallet's signature", () =>
        client.verifyTypedData({ address: from, ...transferTypedData(network, auth), signature }),
      );
      return valid ? "valid" : "invalid";
    },

    async settlementState(from, nonce, known, validBefore, paid) {
      await ensureChain();
      // No transaction known (a settlement whose sender died before saying): the one that used it,
      // if it paid us.
      const tx = known ?? (paid && (await usedBy(from, nonce, paid)));
      const receipt = tx ? await receiptOf(tx) : undefined;
      if (receipt?.status === "success") {
        const depth = (await client.getBlockNumber()) - receipt.blockNumber + 1n;
        if (depth >= RECONCILE_CONFIRMATIONS) return { status: "confirmed", transaction: tx! };
        return {
          status: "unknown",
          reason: `${depth} of ${RECONCILE_CONFIRMATIONS} confirmations`,
        };
      }
      const used = await client.readContract({
        address: network.asset,
        abi: USDC_ABI,
        functionName: "authorizationState",
        args: [from, nonce],
      });
      // Used by a transfer we do not know of, or canceled by the payer: the chain cannot say here.
      if (used) return { status: "unknown", reason: "the nonce is used by another transaction" };
      if (receipt?.status === "reverted")
        return { status: "failed", reason: `settlement transaction ${tx} reverted` };
      if (Date.now() / 1000 > validBefore + RECONCILE_CONFIRMATIONS_SECONDS)
        return {
          status: "failed",
          reason: "the authorization expired before any transfer used it",
        };
      return { status: "unknown", reason: "the transaction is not mined yet" };
    },

    async checkTransfer(p, caller) {
      // The precise causes first (their messages say how much is missing), then everything else.
      await checkFunds(p);
      await simulate(p, caller);
    },
  };

  async function simulate(p: VerifiedPayment, caller: `0x${string}`): Promise<void> {
    try {
      await ensureChain();
      await client.simulateContract({
        address: p.asset,
        abi: USDC_ABI,
        functionName: "transferWithAuthorization",
        args: transferArgs(p),
        account: caller,
      });
    } catch (err) {
      if (err instanceof InternalError) throw err;
      const reverted =
        err instanceof BaseError
          ? err.walk((e) => e instanceof ContractFunctionRevertedError)
          : null;
      if (!(reverted instanceof ContractFunctionRevertedError))
        throw new PaymentError(
          `could not simulate the transfer on chain (${shortMessage(err)}), so the job was not run; try again later`,
          { cause: err, code: "chain_unavailable" },
        );
      const reason = reverted.reason ?? shortMessage(reverted);
      const known = KNOWN_REVERTS.find(([pattern]) => pattern.test(reason));
      throw new PaymentError(
        `the token would refuse this transfer (${reason}), so the job was not run: ${known?.[2] ?? "sign a new authorization"}`,
        { cause: err, code: known?.[1] ?? "transfer_refused" },
      );
    }
  }

  /** Balance and nonce, read directly: their refusals can say how much is missing. */
  async function checkFunds(p: VerifiedPayment): Promise<void> {
    {
      const { from, value, nonce } = p.authorization;
      const [balance, used] = await rpc("check the payer's balance and nonce", () =>
        Promise.all([
          client.readContract({
            address: p.asset,
            abi: USDC_ABI,
            functionName: "balanceOf",
            args: [from],
          }),
          client.readContract({
            address: p.asset,
            abi: USDC_ABI,
            functionName: "authorizationState",
            args: [from, nonce],
          }),
        ]),
      );
      if (used)
        throw new PaymentError(
          `authorization nonce ${nonce} of ${from} was already used or canceled on chain; sign a new authorization with a fresh nonce`,
          { code: "nonce_used" },
        );
      if (balance < BigInt(value))
        throw new PaymentError(
          `payer ${from} holds ${balance} atomic units of the token, less than the ${value} this job costs; fund the account or pay from another`,
          { code: "insufficient_funds" },
        );
    }
  }
}
