/**
 * The parts of USDC (FiatTokenV2_2) the runtime calls and reads (checks.ts, direct-settlement.ts), as
 * viem's typed ABI. Part of your project: edit freely.
 */
import { TRANSFER_WITH_AUTHORIZATION } from "../../x402.js";

export const USDC_ABI = [
  {
    type: "function",
    name: "balanceOf",
    stateMutability: "view",
    inputs: [{ name: "account", type: "address" }],
    outputs: [{ type: "uint256" }],
  },
  {
    type: "function",
    name: "authorizationState",
    stateMutability: "view",
    inputs: [
      { name: "authorizer", type: "address" },
      { name: "nonce", type: "bytes32" },
    ],
    outputs: [{ type: "bool" }],
  },
  {
    type: "event",
    name: "Transfer",
    inputs: [
      { name: "from", type: "address", indexed: true },
      { name: "to", type: "address", indexed: true },
      { name: "value", type: "uint256", indexed: false },
    ],
  },
  {
    type: "event",
    name: "AuthorizationUsed",
    inputs: [
      { name: "authorizer", type: "address", indexed: true },
      { name: "nonce", type: "bytes32", indexed: true },
    ],
  },
  {
    type: "function",
    name: "transferWithAuthorization",
    stateMutability: "nonpayable",
    // EIP-3009's signed fields, then the signature over them.
    inputs: [
      ...TRANSFER_WITH_AUTHORIZATION.TransferWithAuthorization,
      { name: "signature", type: "bytes" },
    ],
    outputs: [],
  },
] as const;
