/**
 * Direct settlement (X402_RPC_URL + X402_SETTLER_KEY): this server submits USDC's
 * transferWithAuthorization itself and waits for the receipt. The settler account pays the gas
 * (keep a little ETH on it) and never holds the payments: the USDC goes from payer to PAY_TO.
 * Part of the `onchain` feature, loaded only in this mode (../scheme.ts). Part of your project: edit freely.
 *
 * Several instances may share one settler key. Each transaction from that account needs the next
 * account nonce, so sending is one step at a time per account:
 *   1. take the settler account's lock (the ledger's, shared by every instance using that ledger);
 *   2. simulate the transfer, read the account's next nonce from the node (pending transactions
 *      included, so the previous holder's transaction counts), sign, send;
 *   3. release the lock, then wait for the receipt (in parallel with other settlements).
 * Instances that do not share a ledger can still pick the same nonce: the node refuses the
 * loser's transaction, which then repeats step 2 with a fresh nonce (a few times at most).
 */
import { keccak256 } from "../keccak.js";
import type { DirectSettlerOptions } from "../chain.js";
import { chainFor, shortMessage, transferArgs } from "./checks.js";
import { USDC_ABI } from "./usdc-abi.js";
import { SettlementError, type Settler } from "../../settlement.js";
import { loadViem, loadViemAccounts, type Hex, type TransferArgs } from "./viem.js";

// viem, typed by what this file uses (see viem.ts: its declarations stay out of your type-check).
const {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  http,
  HttpRequestError,
  NonceTooLowError,
  RpcRequestError,
  TimeoutError,
} = await loadViem();
const { privateKeyToAccount } = await loadViemAccounts();

type Exclusive = NonNullable<DirectSettlerOptions["exclusive"]>;

/** How often to poll for the receipt (Base makes a block every 2 s). */
const POLLING_INTERVAL_MS = 500;

/** Sends per settlement when other senders keep taking the account nonce first. */
const MAX_SEND_ATTEMPTS = 8;

/** A random pause after losing a nonce, longer each time, so two senders fall out of step. */
const backoffMs = (attempt: number): number => Math.random() * Math.min(1000, 25 * 2 ** attempt);

/**
 * How long one settlement may hold the settler account's lock (and wait for it): simulating,
 * signing and sending take a few RPC round trips; a holder that died frees it after this.
 */
const lockHoldMs = (timeoutSeconds: number): number => Math.max(10, timeoutSeconds) * 1000;

/** True when the RPC request failed in transit: the node may have received the transaction. */
const lostInTransit = (err: unknown): boolean =>
  err instanceof BaseError &&
  err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError) !== null;

/** viem's one-line summary of an error, without a final period (the pipeline goes on after it). */
const reason = (err: unknown): string => shortMessage(err).replace(/\.$/, "");

/** The node's own words for a refused request ("nonce too low"), else viem's summary. One line. */
function nodeAnswer(err: unknown): string {
  const rpc = err instanceof BaseError ? err.walk((e) => e instanceof RpcRequestError) : null;
  const details = rpc instanceof RpcRequestError ? rpc.details.replace(/\s+/g, " ").trim() : "";
  return details ? details.replace(/\.$/, "") : reason(err);
}

/**
 * The node already holds this exact transaction (same hash): it was sent, by us or by whoever
 * also had these bytes. anvil/reth: "transaction already imported"; geth: "already known".
 */
const ALREADY_KNOWN = /already known|already imported|known transaction/i;

/**
 * Another transaction from the settler account took our nonce (another instance sending at the
 * same moment). anvil and geth: "nonce too low" once it is mined, "replacement transaction
 * underpriced" while it is pending; other nodes: "nonce has already been used", "OldNonce".
 */
const NONCE_TAKEN =
  /nonce too low|nonce has already been used|old ?nonce|replacement transaction underpriced|replacement fee too low/i;

const nonceTaken = (err: unknown): boolean =>
  NONCE_TAKEN.test(nodeAnswer(err)) ||
  (err instanceof BaseError && err.walk((e) => e instanceof NonceTooLowError) !== null);

/** Without a shared ledger: one transaction at a time from this process (the lock name is moot). */
function inProcessLock(): Exclusive {
  let queue: Promise<unknown> = Promise.resolve();
  return <T,>(_name: string, _holdMs: number, work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => undefined);
    return run;
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createDirectSettler(options: DirectSettlerOptions): Settler {
  const { network, timeoutSeconds } = options;
  const chain = chainFor(network, options.rpcUrl);
  const transport = http(options.rpcUrl);
  const account = privateKeyToAccount(options.settlerKey);
  const client = createPublicClient({ chain, transport, pollingInterval: POLLING_INTERVAL_MS });
  const wallet = createWalletClient({ account, chain, transport });

  const exclusive = options.exclusive ?? inProcessLock();
  const lockName = `settler:${network.chainId}:${account.address.toLowerCase()}`;
  const holdMs = lockHoldMs(timeoutSeconds);

  /** Step 1: holds the settler account's lock around `work`. No lock, nothing sent. */
  async function withSettlerLock(work: () => Promise<Hex>): Promise<Hex> {
    let sending: Promise<Hex> | undefined;
    try {
      await exclusive(lockName, holdMs, () => (sending = work()));
    } catch (err) {
      // A lock failing after the send (e.g. on release) does not undo it: `sending` has the outcome.
      if (sending === undefined)
        throw new SettlementError(`could not take the settler account's lock: ${reason(err)}`, {
          cause: err,
        });
    }
    return sending!;
  }

  /** Step 2a: a used nonce, an expired authorization or a short balance fails here, before any gas is spent. */
  async function simulate(args: TransferArgs): Promise<void> {
    try {
      await client.simulateContract({
        abi: USDC_ABI,
        functionName: "transferWithAuthorization",
        args,
        account,
        address: network.asset,
      });
    } catch (err) {
      // A revert is the token's answer (used nonce, balance, blacklist, pause, signature...):
      // retrying cannot change it. Anything else (the RPC failing) may pass on a retry.
      const reverted =
        err instanceof BaseError && err.walk((e) => e instanceof ContractFunctionRevertedError);
      throw new SettlementError(`the transfer would fail: ${reason(err)}`, {
        cause: err,
        permanent: Boolean(reverted),
      });
    }
  }

  /**
   * Step 2b: signs at the account's next nonce, counting its pending transactions. The nonce is
   * read last (after gas and fees), so another sender has little time to take it before we send.
   */
  async function signAtNextNonce(args: TransferArgs): Promise<Hex> {
    try {
      const tx = await wallet.prepareTransactionRequest({
        to: network.asset,
        data: encodeFunctionData({
          abi: USDC_ABI,
          functionName: "transferWithAuthorization",
          args,
        }),
        parameters: ["chainId", "type", "fees", "gas"],
      });
      const nonce = await client.getTransactionCount({
        address: account.address,
        blockTag: "pending",
      });
      return await wallet.signTransaction({ ...tx, nonce });
    } catch (err) {
      throw new SettlementError(`could not prepare the settlement transaction: ${reason(err)}`, {
        cause: err,
      });
    }
  }

  /**
   * Step 2c: sends. "sent" once the node has the transaction; "nonce taken" when another
   * transaction got that nonce first (nothing of ours was sent). Throws on any other refusal,
   * and (uncertain) when the answer was lost: the node may have the transaction.
   */
  async function send(signed: Hex, hash: Hex): Promise<"sent" | { nonceTaken: string }> {
    try {
      await wallet.sendRawTransaction({ serializedTransaction: signed });
      return "sent";
    } catch (err) {
      if (lostInTransit(err))
        throw new SettlementError(
          `settlement transaction ${hash} may have been sent (the RPC request failed: ${reason(err)})`,
          { broadcastTx: hash, cause: err },
        );
      if (ALREADY_KNOWN.test(nodeAnswer(err))) return "sent";
      if (nonceTaken(err)) return { nonceTaken: nodeAnswer(err) };
      throw new SettlementError(`the node refused the settlement transaction: ${nodeAnswer(err)}`, {
        cause: err,
      });
    }
  }

  /** Step 2, under the lock: simulate, sign at the next nonce, send; again if the nonce was taken. */
  async function submit(args: TransferArgs): Promise<Hex> {
    for (let attempt = 1; ; attempt++) {
      await simulate(args);
      const signed = await signAtNextNonce(args);
      // The hash is known before sending, so a lost answer can still name the transaction.
      const hash: Hex = `0x${Buffer.from(keccak256(Buffer.from(signed.slice(2), "hex"))).toString("hex")}`;
      const answer = await send(signed, hash);
      if (answer === "sent") return hash;
      if (attempt === MAX_SEND_ATTEMPTS)
        throw new SettlementError(
          `the node refused the settlement transaction: ${answer.nonceTaken} (the settler account's nonce was taken by another sender ${MAX_SEND_ATTEMPTS} times)`,
        );
      await pause(backoffMs(attempt));
    }
  }

  /** Step 3: waits for the receipt, outside the lock. */
  async function confirm(hash: Hex): Promise<void> {
    let status: "success" | "reverted";
    try {
      ({ status } = await client.waitForTransactionReceipt({
        hash,
        timeout: timeoutSeconds * 1000,
      }));
    } catch (err) {
      throw new SettlementError(
        `settlement transaction ${hash} was sent but not confirmed within ${timeoutSeconds} s (${reason(err)}); it may still be mined`,
        { broadcastTx: hash, cause: err },
      );
    }
    if (status !== "success")
      throw new SettlementError(`settlement transaction ${hash} reverted`, { permanent: true });
  }

  return {
    async settle(payment) {
      const hash = await withSettlerLock(() => submit(transferArgs(payment)));
      await confirm(hash);
      return { transaction: hash, network: payment.network, payer: payment.payer };
    },
  };
}
