// The payment every paid bench signs: an EIP-3009 TransferWithAuthorization of 0.01 USDC on Base
// Sepolia's USDC, from anvil's first well-known test key (public) to its second account. Nothing is
// ever sent on a chain: the benches replace settlement with success.
export const PAY_TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
export const PAYER_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
export const DOMAIN = {
  name: "USDC",
  version: "2",
  chainId: 84532,
  verifyingContract: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
};
export const TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
};
export const PRICE = "10000"; // 0.01 USDC
