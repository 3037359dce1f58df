// Solana settings (PAY_TO_SOLANA, SOLANA_FEE_PAYER_KEY, X402_RPC_URL_<NET>, X402_ASSET_<NET>): what is
// accepted, and every refusal with what to set; a secret key never appears in a message. The base58 and
// key checks (templates/runtime/payments/svm/keys.ts, which must not load @solana/kit) against @solana/kit.
import { randomBytes } from "node:crypto";
import { createKeyPairSignerFromBytes, getBase58Decoder, getBase58Encoder } from "@solana/kit";
import { describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../templates/runtime/config.js";
import {
  base58Decode,
  base58Encode,
  isSolanaAddress,
  parseSolanaSecretKey,
} from "../../templates/runtime/payments/svm/keys.js";
import { newKeys } from "./kit.js";

const PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
const FACILITATOR = "https://x402.org/facilitator";
const SOL_PAYEE = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const RPC = "https://solana.example.com/rpc/secret-api-key";

function problems(env: Record<string, string>): string[] {
  try {
    resolveConfig({ devMode: false, env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  return [];
}

describe("Solana settings", () => {
  it("takes solana-devnet with PAY_TO_SOLANA and a facilitator; PAY_TO only when an EVM network is offered", () => {
    const config = resolveConfig({
      devMode: false,
      env: {
        X402_NETWORK: "solana-devnet",
        PAY_TO_SOLANA: SOL_PAYEE,
        X402_FACILITATOR_URL: FACILITATOR,
      },
    });
    expect(config.payment?.payTo).toBeUndefined();
    expect(config.payment?.networks).toEqual([
      expect.objectContaining({
        family: "svm",
        written: "solana-devnet",
        payTo: SOL_PAYEE,
        network: {
          family: "svm",
          v1Name: "solana-devnet",
          caip2: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
          asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
          decimals: 6,
        },
        settlement: expect.objectContaining({ kind: "facilitator", urls: [FACILITATOR] }),
      }),
    ]);
    expect(
      problems({
        X402_NETWORKS: "base,solana",
        PAY_TO_SOLANA: SOL_PAYEE,
        X402_FACILITATOR_URL: FACILITATOR,
      }),
    ).toEqual([expect.stringMatching(/^PAY_TO is not set/)]);
  });

  it("X402_FACILITATOR_URL with SOLANA_FEE_PAYER_KEY: EVM through the facilitator, Solana direct; solana-keygen's JSON form works too", async () => {
    const fee = await newKeys();
    for (const key of [fee.secretKey, fee.keygenJson]) {
      const config = resolveConfig({
        devMode: false,
        env: {
          X402_NETWORKS: "base-sepolia,solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
          PAY_TO,
          PAY_TO_SOLANA: SOL_PAYEE,
          X402_FACILITATOR_URL: FACILITATOR,
          SOLANA_FEE_PAYER_KEY: key,
          // The global X402_RPC_URL is an EVM endpoint: never Solana's.
          X402_RPC_URL: "https://evm.example.com",
          X402_RPC_URL_SOLANA_ETWTRABZAYQ6IMFEYKOURU166VU2XQA1: RPC,
        },
      });
      const [evm, solana] = config.payment!.networks;
      expect(evm).toMatchObject({ family: "evm", settlement: { kind: "facilitator" } });
      expect(solana).toMatchObject({
        family: "svm",
        rpcUrl: RPC,
        settlement: { kind: "direct", rpcUrl: RPC, feePayer: fee.address },
      });
    }
  });

  it("refuses a malformed or missing PAY_TO_SOLANA, naming it", () => {
    const env = { X402_NETWORK: "solana", X402_FACILITATOR_URL: FACILITATOR };
    expect(problems(env)).toEqual([
      expect.stringMatching(/^PAY_TO_SOLANA is not set: set it to the Solana address \(base58\)/),
    ]);
    for (const bad of [PAY_TO, "not-base58-0OIl", "1111"])
      expect(problems({ ...env, PAY_TO_SOLANA: bad })).toEqual([
        expect.stringMatching(
          /^PAY_TO_SOLANA is ".*": set it to a Solana address \(base58 of 32 bytes/,
        ),
      ]);
  });

  it("refuses a malformed SOLANA_FEE_PAYER_KEY without ever repeating it", async () => {
    const good = await newKeys();
    const other = await newKeys();
    const bytes = getBase58Encoder().encode(good.secretKey);
    const swapped = getBase58Decoder().decode(
      new Uint8Array([...bytes.subarray(0, 32), ...getBase58Encoder().encode(other.address)]),
    );
    const cases: Array<[string, RegExp]> = [
      [good.secretKey.slice(0, 40), /holds \d+ bytes, not the 64 of a Solana secret key/],
      [`${good.secretKey.slice(0, -1)}0`, /is not base58 nor a JSON byte array/],
      ["[1,2,3", /is not a JSON byte array/],
      [JSON.stringify([...new Array(64).fill(256)]), /is a JSON array but not of bytes/],
      [
        swapped,
        /is not a Solana key pair: its last 32 bytes are not the public key of its first 32/,
      ],
    ];
    for (const [key, why] of cases) {
      const found = problems({
        X402_NETWORK: "solana-devnet",
        PAY_TO_SOLANA: SOL_PAYEE,
        SOLANA_FEE_PAYER_KEY: key,
        X402_RPC_URL_SOLANA_DEVNET: RPC,
      });
      expect(found).toEqual([
        expect.stringMatching(new RegExp(`^SOLANA_FEE_PAYER_KEY ${why.source}`)),
      ]);
      for (const p of found) {
        expect(p).not.toContain(key.slice(0, 12));
        expect(p).not.toContain(good.secretKey.slice(0, 12));
      }
    }
  });

  it("direct Solana needs the network's own RPC; no route at all is refused with what to set", async () => {
    const fee = await newKeys();
    expect(
      problems({
        X402_NETWORK: "solana-devnet",
        PAY_TO_SOLANA: SOL_PAYEE,
        SOLANA_FEE_PAYER_KEY: fee.secretKey,
        X402_RPC_URL: "https://evm.example.com",
      }),
    ).toEqual([
      expect.stringMatching(
        /^SOLANA_FEE_PAYER_KEY is set but X402_RPC_URL_SOLANA_DEVNET is not: direct settlement on solana-devnet/,
      ),
    ]);
    expect(problems({ X402_NETWORK: "solana-devnet", PAY_TO_SOLANA: SOL_PAYEE })).toEqual([
      expect.stringMatching(
        /^no settlement route for solana-devnet: set X402_FACILITATOR_URL .* or SOLANA_FEE_PAYER_KEY and X402_RPC_URL_SOLANA_DEVNET/,
      ),
    ]);
  });

  it("X402_ASSET_<NET> overrides the mint; a Solana network without built-in USDC needs it", () => {
    const env = { PAY_TO_SOLANA: SOL_PAYEE, X402_FACILITATOR_URL: FACILITATOR };
    const custom = "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z";
    expect(problems({ ...env, X402_NETWORK: custom })).toEqual([
      expect.stringMatching(
        /^X402_ASSET_SOLANA_4UHCVJYU9PJKVQYS88URDISWHXSCKY3Z is not set: network solana:4uhc.* has no built-in USDC/,
      ),
    ]);
    expect(problems({ ...env, X402_NETWORK: "solana", X402_ASSET_SOLANA: "0xabc" })).toEqual([
      expect.stringMatching(/^X402_ASSET_SOLANA is "0xabc": set it to the token's mint address/),
    ]);
    const config = resolveConfig({
      devMode: false,
      env: {
        ...env,
        X402_NETWORK: custom,
        [`X402_ASSET_SOLANA_4UHCVJYU9PJKVQYS88URDISWHXSCKY3Z`]: SOL_PAYEE,
      },
    });
    expect(config.payment?.networks[0]?.network).toMatchObject({ caip2: custom, asset: SOL_PAYEE });
  });
  it("caps what a payment may ask the fee payer to pay: 40000 compute units at 10000 micro-lamports unless SOLANA_MAX_COMPUTE_UNITS / SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS say otherwise", () => {
    const env = {
      X402_NETWORK: "solana-devnet",
      PAY_TO_SOLANA: SOL_PAYEE,
      X402_FACILITATOR_URL: FACILITATOR,
    };
    const caps = (more: Record<string, string>) =>
      resolveConfig({ devMode: false, env: { ...env, ...more } }).payment?.networks[0];
    expect(caps({})).toMatchObject({
      computeBudget: { maxComputeUnits: 40_000, maxPriorityFeeMicroLamports: 10_000 },
    });
    expect(
      caps({ SOLANA_MAX_COMPUTE_UNITS: "25000", SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS: "0" }),
    ).toMatchObject({ computeBudget: { maxComputeUnits: 25_000, maxPriorityFeeMicroLamports: 0 } });
    expect(
      problems({
        ...env,
        SOLANA_MAX_COMPUTE_UNITS: "1400001",
        SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS: "1.5",
      }),
    ).toEqual([
      expect.stringMatching(
        /^SOLANA_MAX_COMPUTE_UNITS is "1400001": set it to the most compute units a Solana payment may ask for, a whole number from 1 to 1400000/,
      ),
      expect.stringMatching(
        /^SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS is "1.5": set it to the highest compute unit price/,
      ),
    ]);
  });
});

describe("base58 and Solana keys without @solana/kit", () => {
  it("encodes and decodes as @solana/kit does, leading zeros included", () => {
    for (const bytes of [
      new Uint8Array(0),
      new Uint8Array([0, 0, 1]),
      new Uint8Array(32),
      ...Array.from({ length: 50 }, (_, i) => new Uint8Array(randomBytes(1 + (i % 64)))),
    ]) {
      const text = getBase58Decoder().decode(bytes);
      expect(base58Encode(bytes)).toBe(text);
      expect(base58Decode(text)).toEqual(new Uint8Array(getBase58Encoder().encode(text)));
    }
    expect(base58Decode("0OIl")).toBeUndefined();
    expect(isSolanaAddress(SOL_PAYEE)).toBe(true);
    expect(isSolanaAddress("11111111111111111111111111111111")).toBe(true); // the system program
    expect(isSolanaAddress(PAY_TO)).toBe(false);
  });

  it("reads a key pair's address as @solana/kit's signer does", async () => {
    const { secretKey } = await newKeys();
    const parsed = parseSolanaSecretKey(secretKey);
    if ("problem" in parsed) throw new Error(parsed.problem);
    const signer = await createKeyPairSignerFromBytes(parsed.bytes);
    expect(parsed.address).toBe(signer.address);
  });
});
