// Anvil's default-mnemonic accounts ("test test ... junk"). These keys are PUBLIC and well known:
// use them only against a local test chain, never anywhere real.
import { privateKeyToAddress } from "viem/accounts";

/** Account 0: deploys and administers the test USDC. */
export const DEPLOYER_KEY =
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80" as const;

/** Accounts 1..4: payers, each funded with test USDC by the global setup. */
export const PAYER_KEYS = [
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
] as const satisfies readonly `0x${string}`[];

/** Account 7: the in-process x402 facilitator's gas-paying signer. */
export const FACILITATOR_KEY =
  "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356" as const;

/** Account 8: for tests that settle on chain themselves (not through the facilitator). */
export const SETTLER_KEY =
  "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97" as const;

/** Account 9: receives payments. */
export const PAYEE_KEY =
  "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6" as const;
export const PAYEE = privateKeyToAddress(PAYEE_KEY);
