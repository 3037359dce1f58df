// The runtime's own keccak-256, EIP-55 checksums, EIP-712 transfer digest and secp256k1 recovery,
// checked against viem (what the runtime used before, and what clients sign with) and, for recovery,
// @noble/curves (viem's own curve library) on random, malformed and adversarial input: the same
// answers, or no signer where ecrecover finds none.
import { randomBytes } from "node:crypto";
import {
  keccak256 as viemKeccak,
  getAddress,
  hashTypedData,
  isAddress as viemIsAddress,
  recoverAddress as viemRecoverAddress,
} from "viem/utils";
import { generatePrivateKey, privateKeyToAccount, sign } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { checksumAddress, isAddress } from "../../templates/runtime/payments/evm/address.js";
import { domainSeparator, transferDigest } from "../../templates/runtime/payments/evm/eip712.js";
import { keccak256, keccak256Text } from "../../templates/runtime/payments/evm/keccak.js";
import { EVM_NETWORKS as KNOWN_NETWORKS } from "../../templates/runtime/payments/evm/networks.js";
import type { ResolvedNetwork } from "../../templates/runtime/payments/networks.js";
import { recoverAddress, SECP256K1_N } from "../../templates/runtime/payments/evm/secp256k1.js";
import { transferTypedData, type Authorization } from "../../templates/runtime/payments/x402.js";
import { adversarialCases, forgedCases, nobleRecover, signedCases } from "./secp256k1-oracle.js";

const hex = (bytes: Uint8Array): `0x${string}` => `0x${Buffer.from(bytes).toString("hex")}`;
const randomHex = (bytes: number): `0x${string}` => `0x${randomBytes(bytes).toString("hex")}`;
const N = SECP256K1_N;
const word = (n: bigint): string => n.toString(16).padStart(64, "0");

describe("keccak256", () => {
  it("matches viem for every length across the 136-byte block boundary, and a few long inputs", () => {
    for (let length = 0; length <= 300; length++) {
      const data = randomBytes(length);
      expect(hex(keccak256(data))).toBe(viemKeccak(data));
    }
    for (const length of [1000, 4096, 10_000]) {
      const data = randomBytes(length);
      expect(hex(keccak256(data))).toBe(viemKeccak(data));
    }
  });

  it("hashes text as UTF-8 (known vectors)", () => {
    expect(hex(keccak256Text(""))).toBe(
      "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470",
    );
    expect(hex(keccak256Text("Transfer(address,address,uint256)"))).toBe(
      "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
    );
    expect(hex(keccak256Text("héllo ✓"))).toBe(viemKeccak(Buffer.from("héllo ✓", "utf8")));
  });
});

describe("addresses", () => {
  it("checksums like viem's getAddress", () => {
    for (let i = 0; i < 200; i++) {
      const lower = randomHex(20);
      expect(checksumAddress(lower)).toBe(getAddress(lower));
      expect(checksumAddress(lower.toUpperCase().replace("0X", "0x"))).toBe(getAddress(lower));
    }
  });

  it("accepts and refuses what viem's isAddress does", () => {
    const good = getAddress(randomHex(20));
    const lower = good.toLowerCase();
    const flipped = good.replace(/[a-f]/, (c) => c.toUpperCase()); // one letter's case changed
    const cases = [
      good,
      lower,
      flipped,
      `0x${lower.slice(2).toUpperCase()}`,
      lower.slice(0, 41),
      `${lower}0`,
      `0X${lower.slice(2)}`,
      `0x${"g".repeat(40)}`,
      "",
      "0x",
    ];
    for (const text of cases) {
      expect(isAddress(text), text).toBe(viemIsAddress(text));
      expect(isAddress(text, { strict: false }), text).toBe(viemIsAddress(text, { strict: false }));
      expect(isAddress(text), `${text} again (cached)`).toBe(viemIsAddress(text));
    }
    expect(isAddress(good)).toBe(true);
    if (flipped !== good) expect(isAddress(flipped)).toBe(false);
  });
});

describe("EIP-3009 transfer digest", () => {
  const custom: ResolvedNetwork = {
    v1Name: "eip155:31337",
    caip2: "eip155:31337",
    chainId: 31337,
    asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    assetName: "Local Dollar ✓",
    assetVersion: "7",
  };

  it("is viem's hashTypedData of the same typed data, on every network", () => {
    for (const network of [KNOWN_NETWORKS.base, KNOWN_NETWORKS["base-sepolia"], custom]) {
      for (let i = 0; i < 25; i++) {
        const auth: Authorization = {
          from: getAddress(randomHex(20)),
          to: randomHex(20),
          value: String(BigInt(randomHex(i % 2 ? 32 : 4))),
          validAfter: String(i),
          validBefore: String(2_000_000_000 + i),
          nonce: randomHex(32),
        };
        expect(hex(transferDigest(network, auth))).toBe(
          hashTypedData(transferTypedData(network, auth)),
        );
      }
    }
    expect(hex(domainSeparator(custom))).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it("refuses what the EIP-712 encoding cannot hold", () => {
    const auth: Authorization = {
      from: getAddress(randomHex(20)),
      to: randomHex(20),
      value: (2n ** 256n).toString(),
      validAfter: "0",
      validBefore: "1",
      nonce: randomHex(32),
    };
    expect(() => transferDigest(KNOWN_NETWORKS.base, auth)).toThrow(/uint256/);
    expect(() =>
      transferDigest(KNOWN_NETWORKS.base, { ...auth, value: "1", nonce: randomHex(31) }),
    ).toThrow(/nonce/);
  });
});

describe("secp256k1 recovery", () => {
  /** viem's answer, lowercased; undefined where it throws. */
  const viem = async (digest: Uint8Array, signature: string) =>
    viemRecoverAddress({ hash: hex(digest), signature: signature as `0x${string}` }).then(
      (a) => a.toLowerCase(),
      () => undefined,
    );

  it("recovers the signer of random digests, as viem does", async () => {
    for (let i = 0; i < 40; i++) {
      const key = generatePrivateKey();
      const digest = randomBytes(32);
      const signature = await sign({ hash: hex(digest), privateKey: key, to: "hex" });
      const signer = privateKeyToAccount(key).address.toLowerCase();
      expect(recoverAddress(digest, signature)).toBe(signer);
      // The other parity recovers someone else, exactly as ecrecover (and viem) would.
      const other = signature.slice(0, 130) + (signature.endsWith("1b") ? "1c" : "1b");
      const recovered = recoverAddress(digest, other);
      expect(recovered).not.toBe(signer);
      expect(recovered).toBe(await viem(digest, other));
    }
  });

  it("recovers a real payment signature (EIP-712 over USDC's domain)", async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const network = KNOWN_NETWORKS["base-sepolia"];
    const auth: Authorization = {
      from: account.address,
      to: getAddress(randomHex(20)),
      value: "10000",
      validAfter: "0",
      validBefore: "2000000000",
      nonce: randomHex(32),
    };
    const signature = await account.signTypedData(transferTypedData(network, auth));
    expect(recoverAddress(transferDigest(network, auth), signature)).toBe(
      account.address.toLowerCase(),
    );
    const tampered = { ...auth, value: "10001" };
    expect(recoverAddress(transferDigest(network, tampered), signature)).not.toBe(
      account.address.toLowerCase(),
    );
  });

  it("accepts a high s as ecrecover does (recovering the same key with the other parity)", async () => {
    const key = generatePrivateKey();
    const digest = randomBytes(32);
    const signature = await sign({ hash: hex(digest), privateKey: key, to: "hex" });
    const r = signature.slice(2, 66);
    const s = BigInt(`0x${signature.slice(66, 130)}`);
    const v = signature.endsWith("1b") ? "1c" : "1b";
    const high = `0x${r}${word(N - s)}${v}`;
    expect(recoverAddress(digest, high)).toBe(privateKeyToAccount(key).address.toLowerCase());
    expect(recoverAddress(digest, high)).toBe(await viem(digest, high));
  });

  it("finds no signer where ecrecover finds none", async () => {
    const key = generatePrivateKey();
    const digest = randomBytes(32);
    const signature = await sign({ hash: hex(digest), privateKey: key, to: "hex" });
    const r = signature.slice(2, 66);
    const s = signature.slice(66, 130);
    const noSigner = [
      `0x${r}${s}00`, // v = 0 and 1: ecrecover wants 27 or 28
      `0x${r}${s}01`,
      `0x${r}${s}1d`,
      `0x${word(0n)}${s}1b`, // r = 0
      `0x${word(N)}${s}1b`, // r = n
      `0x${r}${word(0n)}1b`, // s = 0
      `0x${r}${word(N)}1b`, // s = n
      `0x${word(5n)}${s}1b`, // x = 5 is not on the curve (5³ + 7 = 132 has no square root mod p)
      signature.slice(0, 130), // 64 bytes
      `${signature}00`, // 66 bytes
      `0x${"zz".repeat(65)}`,
    ];
    for (const bad of noSigner) expect(recoverAddress(digest, bad), bad).toBeUndefined();
    expect(recoverAddress(digest.subarray(0, 31), signature)).toBeUndefined();
  });

  it("agrees with viem on random (r, s, v) that nobody signed: the same address or no signer", async () => {
    // Forged signatures are what an attacker sends: whatever ecrecover makes of them, this must make
    // the same (so a check against `from` accepts exactly what the token contract would).
    const smallOrHuge = [1n, 2n, 3n, N - 1n, N - 2n, (N - 1n) / 2n, (N + 1n) / 2n];
    for (let i = 0; i < 300; i++) {
      const digest = randomBytes(32);
      const pick = (): bigint =>
        i % 5 === 0
          ? smallOrHuge[Math.floor(Math.random() * smallOrHuge.length)]!
          : BigInt(randomHex(32)) % N;
      const signature = `0x${word(pick())}${word(pick())}${i % 2 ? "1b" : "1c"}`;
      expect(recoverAddress(digest, signature), signature).toBe(await viem(digest, signature));
    }
  });

  it("handles digests at and above the group order like viem", async () => {
    const key = generatePrivateKey();
    for (const h of [0n, 1n, N - 1n, N, N + 1n, 2n ** 256n - 1n]) {
      const digest = Buffer.from(word(h), "hex");
      const signature = await sign({ hash: hex(digest), privateKey: key, to: "hex" });
      expect(recoverAddress(digest, signature)).toBe(await viem(digest, signature));
    }
  });
});

describe("secp256k1 recovery against @noble/curves", () => {
  it("agrees on the audit's adversarial signatures: R = ±G, Q at infinity, s = N - 1, r >= P", async () => {
    const cases = await adversarialCases();
    for (const { name, digest, signature } of cases)
      expect(recoverAddress(digest, signature), name).toBe(nobleRecover(digest, signature));
    // What ecrecover makes of them, spelled out (so the oracle's wrapper is checked too).
    const recovered = (name: string) => {
      const found = cases.find((c) => c.name === name)!;
      return recoverAddress(found.digest, found.signature);
    };
    for (const name of [
      "R = G",
      "R = -G",
      "s = N - 1, v = 27",
      "R = -G, s = N - 1",
      "r = 1, v = 28",
    ])
      expect(recovered(name), name).toMatch(/^0x[0-9a-f]{40}$/);
    for (const name of [
      "R = G, Q at infinity (s = h)",
      "R = -G, Q at infinity (s = N - h)",
      "r = P, v = 27",
      "r = P + 1, v = 28",
      "r = 2^256 - 1, v = 27",
      "r = N, v = 28",
      "r = P - 1, v = 27",
      "s = N, v = 27",
    ])
      expect(recovered(name), name).toBeUndefined();
  });

  it("agrees on signed and forged signatures", async () => {
    for (const { name, digest, signature } of [...(await signedCases(20)), ...forgedCases(200)])
      expect(recoverAddress(digest, signature), name).toBe(nobleRecover(digest, signature));
  });

  it("checks signatures with node:crypto's curve where this Node's OpenSSL has it", async () => {
    const { getCurves } = await import("node:crypto");
    const { recoveryPath } = await import("../../templates/runtime/payments/evm/secp256k1.js");
    expect(recoveryPath).toEqual({
      path: getCurves().includes("secp256k1") ? "openssl" : "pure-js",
    });
  });
});
