/**
 * The payment facts the discovery documents state: how much each capability costs, and where and how
 * it is paid. Production always knows the network and payee; dev mode (jobs are free) may not, and
 * then they are left out rather than guessed. Part of your project: edit freely.
 */
import type { ResolvedConfig } from "../config.js";
import { familyById } from "../payments/families.js";
import type { AgentDefinition } from "../types.js";

/** One capability's price: decimal USDC as declared, and USDC atomic units (6 decimals). */
export interface Price {
  amount: string;
  atomic: string;
}

export interface PaymentFacts {
  /** Dev mode: the payment gate is off, jobs are free. */
  free: boolean;
  /** The network payments are taken on (the preferred one, when several), when configured. */
  network?: { caip2: string; v1Name: string; chainId?: number };
  /** Every network payments are taken on, in the seller's order, with its token and payee. */
  networks?: Array<{
    caip2: string;
    v1Name: string;
    /** EVM networks only. */
    chainId?: number;
    asset: string;
    payTo: string;
  }>;
  /** The preferred network's token (USDC): its address (a Solana mint), and EIP-712 domain (EVM). */
  asset?: { address: string; name?: string; version?: string };
  /** Who is paid on the preferred network, when configured. */
  payTo?: string;
  /** Per capability, in declaration order. */
  prices: Record<string, Price>;
}

export function paymentFacts(agent: AgentDefinition, config: ResolvedConfig): PaymentFacts {
  const prices: Record<string, Price> = {};
  for (const [name, c] of Object.entries(agent.capabilities))
    prices[name] = { amount: c.declaration.pricing.amount, atomic: c.priceAtomic };
  const facts: PaymentFacts = { free: config.devMode, prices };
  const payment = config.payment;
  if (payment) {
    // Each network's family says its chain id (EVM) and token.
    const own = payment.networks.map((n) => familyById(n.family).facts(n));
    facts.networks = payment.networks.map((n, i) => ({
      caip2: n.network.caip2,
      v1Name: n.network.v1Name,
      ...(own[i]!.chainId !== undefined && { chainId: own[i]!.chainId }),
      asset: n.network.asset,
      payTo: n.payTo,
    }));
    const first = payment.networks[0]!;
    const { caip2, v1Name } = first.network;
    const { chainId, asset } = own[0]!;
    facts.network = chainId !== undefined ? { caip2, v1Name, chainId } : { caip2, v1Name };
    facts.asset = asset;
    facts.payTo = first.payTo;
  }
  return facts;
}

export { networkLabel, whereLabel } from "./labels.js";
