/**
 * Direct settlement (X402_RPC_URL + X402_SETTLER_KEY): this server submits USDC's
 * transferWithAuthorization itself and waits for the receipt. The settler account pays the gas
 * (keep a little ETH on it) and never holds the payments: the USDC goes from payer to PAY_TO.
 * Loaded only in this mode (see payment.ts). Part of your project: edit freely.
 */
import {
  BaseError,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  http,
  HttpRequestError,
  keccak256,
  TimeoutError,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { ResolvedNetwork } from "./networks.js";
import { chainFor, shortMessage, USDC_ABI } from "./onchain.js";
import { SettlementError, type Settler } from "./settlement.js";

type Hex = `0x${string}`;

export interface DirectSettlerOptions {
  rpcUrl: string;
  /** Never logged, never sent anywhere: it only signs transactions locally. */
  settlerKey: Hex;
  network: ResolvedNetwork;
  /** How long to wait for the receipt once the transaction is sent. */
  timeoutSeconds: number;
}

/** How often to poll for the receipt (Base makes a block every 2 s). */
const POLLING_INTERVAL_MS = 500;

/** True when the RPC request failed in transit: the node may have received the transaction. */
const lostInTransit = (err: unknown): boolean =>
  err instanceof BaseError &&
  err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError) !== null;

export function createDirectSettler(options: DirectSettlerOptions): Settler {
  const { network, timeoutSeconds } = options;
  const chain = chainFor(network, options.rpcUrl);
  const transport = http(options.rpcUrl);
  const account = privateKeyToAccount(options.settlerKey);
  const client = createPublicClient({ chain, transport, pollingInterval: POLLING_INTERVAL_MS });
  const wallet = createWalletClient({ account, chain, transport });

  // One transaction at a time from the settler account: concurrent sends would pick the same
  // account nonce. Only the sending is queued; waiting for receipts runs in parallel.
  let queue: Promise<unknown> = Promise.resolve();
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => undefined);
    return run;
  };

  /** Simulates, signs and sends; resolves with the hash once the node has the transaction. */
  const send = (args: readonly [Hex, Hex, bigint, bigint, bigint, Hex, Hex]): Promise<Hex> =>
    serially(async () => {
      const call = { abi: USDC_ABI, functionName: "transferWithAuthorization", args } as const;
      // A used nonce, an expired authorization or a short balance fails here, before any gas is spent.
      try {
        await client.simulateContract({ ...call, account, address: network.asset });
      } catch (err) {
        throw new SettlementError(`the transfer would fail: ${shortMessage(err)}`, { cause: err });
      }
      let signed: Hex;
      try {
        const tx = await wallet.prepareTransactionRequest({
          to: network.asset,
          data: encodeFunctionData(call),
        });
        signed = await wallet.signTransaction(tx);
      } catch (err) {
        throw new SettlementError(
          `could not prepare the settlement transaction: ${shortMessage(err)}`,
          { cause: err },
        );
      }
      // The hash is known before sending, so a send whose answer is lost can still be reported.
      const hash = keccak256(signed);
      try {
        await wallet.sendRawTransaction({ serializedTransaction: signed });
      } catch (err) {
        if (lostInTransit(err))
          throw new SettlementError(
            `settlement transaction ${hash} may have been sent (the RPC request failed: ${shortMessage(err)})`,
            { broadcastTx: hash, cause: err },
          );
        throw new SettlementError(
          `the node refused the settlement transaction: ${shortMessage(err)}`,
          {
            cause: err,
          },
        );
      }
      return hash;
    });

  return {
    async settle(payment) {
      const a = payment.authorization;
      const hash = await send([
        a.from,
        a.to,
        BigInt(a.value),
        BigInt(a.validAfter),
        BigInt(a.validBefore),
        a.nonce,
        payment.signature,
      ]);
      let status: "success" | "reverted";
      try {
        ({ status } = await client.waitForTransactionReceipt({
          hash,
          timeout: timeoutSeconds * 1000,
        }));
      } catch (err) {
        throw new SettlementError(
          `settlement transaction ${hash} was sent but not confirmed within ${timeoutSeconds} s (${shortMessage(err)}); it may still be mined`,
          { broadcastTx: hash, cause: err },
        );
      }
      if (status !== "success")
        throw new SettlementError(`settlement transaction ${hash} reverted; nothing was charged`);
      return { transaction: hash, network: payment.network, payer: a.from };
    },
  };
}
