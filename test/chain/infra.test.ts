// Proves the chain kit is real: Circle's USDC on anvil, EIP-3009 transfers, and a working x402 facilitator.
import { createPublicClient, createWalletClient, http, toHex, type Address, type Hex } from "viem";
import { TRANSFER_WITH_AUTHORIZATION } from "../../templates/runtime/payments/x402.js";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, inject, it } from "vitest";
import { PAYEE, PAYER_KEYS, SETTLER_KEY } from "./accounts.js";
import { ANVIL_BLOCK_SECONDS, localChain, startAnvil } from "./anvil.js";
import { deployUsdc, mintUsdc, MULTICALL3_ADDRESS, USDC_ABI, usdcBalance } from "./usdc.js";

const { rpcUrl, chainId, asset, facilitatorUrl } = inject("chain");
const chain = localChain(rpcUrl, chainId);
const publicClient = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 20 });

function randomNonce(): Hex {
  return toHex(crypto.getRandomValues(new Uint8Array(32)));
}

/** Signs an EIP-3009 TransferWithAuthorization the way x402 clients do (validAfter 0, a random nonce). */
async function signAuthorization(payerKey: Hex, to: Address, value: bigint) {
  const payer = privateKeyToAccount(payerKey);
  const authorization = {
    from: payer.address,
    to,
    value,
    validAfter: 0n,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + 300),
    nonce: randomNonce(),
  };
  const signature = await payer.signTypedData({
    domain: { name: "USDC", version: "2", chainId, verifyingContract: asset },
    types: TRANSFER_WITH_AUTHORIZATION,
    primaryType: "TransferWithAuthorization",
    message: authorization,
  });
  return { authorization, signature };
}

/** An "exact" payload as x402 sends it: the signature and the authorization's numbers as strings. */
async function exactPayload(payerKey: Hex, to: Address, value: bigint) {
  const { authorization: a, signature } = await signAuthorization(payerKey, to, value);
  return {
    signature,
    authorization: {
      from: a.from,
      to: a.to,
      value: a.value.toString(),
      validAfter: a.validAfter.toString(),
      validBefore: a.validBefore.toString(),
      nonce: a.nonce,
    },
  };
}

async function post(path: string, body: unknown) {
  const response = await fetch(`${facilitatorUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("anvil", () => {
  it("stop() ends the chain: it resolves, and the port refuses connections afterwards", async () => {
    const anvil = await startAnvil({ chainId: 31337 });
    const ask = () =>
      fetch(anvil.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      });
    expect((await (await ask()).json()) as { result: string }).toMatchObject({ result: "0x7a69" });
    await anvil.stop();
    await expect(ask()).rejects.toThrow();
  });

  it("keeps time while idle: `latest` follows the clock, so an authorization valid from 5 s ago passes the token's check there", async () => {
    const anvil = await startAnvil({ chainId: 31337 });
    try {
      const asset = await deployUsdc(anvil.rpcUrl, { name: "USDC", version: "2" });
      const local = localChain(anvil.rpcUrl, 31337);
      const client = createPublicClient({ chain: local, transport: http(anvil.rpcUrl) });
      await mintUsdc(anvil.rpcUrl, asset, privateKeyToAccount(PAYER_KEYS[0]).address, 10_000n);
      // Idle longer than the authorization's margin below, with no transaction at all.
      await new Promise((resolve) => setTimeout(resolve, (ANVIL_BLOCK_SECONDS + 6) * 1000));
      const now = Math.floor(Date.now() / 1000);
      const latest = await client.getBlock({ blockTag: "latest" });
      expect(Number(latest.timestamp)).toBeGreaterThanOrEqual(now - ANVIL_BLOCK_SECONDS - 1);
      const payer = privateKeyToAccount(PAYER_KEYS[0]);
      const authorization = {
        from: payer.address,
        to: PAYEE,
        value: 10_000n,
        validAfter: BigInt(now - 5),
        validBefore: BigInt(now + 300),
        nonce: randomNonce(),
      };
      const signature = await payer.signTypedData({
        domain: { name: "USDC", version: "2", chainId: 31337, verifyingContract: asset },
        types: TRANSFER_WITH_AUTHORIZATION,
        primaryType: "TransferWithAuthorization",
        message: authorization,
      });
      const a = authorization;
      // Simulated at `latest`, as the facilitator and the server check a payment before the job runs.
      const { result } = await client.simulateContract({
        address: asset,
        abi: USDC_ABI,
        functionName: "transferWithAuthorization",
        args: [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signature],
        account: privateKeyToAccount(SETTLER_KEY),
      });
      expect(result).toBeUndefined();
    } finally {
      await anvil.stop();
    }
  }, 30_000);
});

describe("local USDC", () => {
  it("is Circle's FiatTokenV2_2 with the Base Sepolia EIP-712 domain", async () => {
    const read = (functionName: string) =>
      publicClient.readContract({ address: asset, abi: USDC_ABI, functionName });
    expect(await read("name")).toBe("USDC");
    expect(await read("version")).toBe("2");
    expect(await read("decimals")).toBe(6);
    expect(await read("symbol")).toBe("USDC");
    expect(await publicClient.getChainId()).toBe(84532);
  });

  it("has Multicall3 at its canonical address", async () => {
    const results = await publicClient.multicall({
      multicallAddress: MULTICALL3_ADDRESS,
      contracts: [{ address: asset, abi: USDC_ABI, functionName: "decimals" }],
      allowFailure: false,
    });
    expect(results).toEqual([6]);
  });

  it("moves funds with a signed authorization submitted by someone else, once", async () => {
    const payerKey = PAYER_KEYS[0];
    const payer = privateKeyToAccount(payerKey).address;
    const value = 12_345n;
    const { authorization: a, signature } = await signAuthorization(payerKey, PAYEE, value);
    const settler = createWalletClient({
      account: privateKeyToAccount(SETTLER_KEY),
      chain,
      transport: http(rpcUrl),
    });
    const before = {
      payer: await usdcBalance(rpcUrl, asset, payer),
      payee: await usdcBalance(rpcUrl, asset, PAYEE),
    };

    const call = {
      address: asset,
      abi: USDC_ABI,
      functionName: "transferWithAuthorization",
      args: [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signature], // the bytes-signature overload
    } as const;
    const hash = await settler.writeContract(call);
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe("success");

    expect(await usdcBalance(rpcUrl, asset, payer)).toBe(before.payer - value);
    expect(await usdcBalance(rpcUrl, asset, PAYEE)).toBe(before.payee + value);
    const used = await publicClient.readContract({
      address: asset,
      abi: USDC_ABI,
      functionName: "authorizationState",
      args: [a.from, a.nonce],
    });
    expect(used).toBe(true);

    await expect(
      publicClient.simulateContract({ ...call, account: settler.account }),
    ).rejects.toThrow(/authorization is used or canceled/);
  });
});

describe("x402 facilitator", () => {
  it("supports exact on eip155:84532 (v2) and base-sepolia (v1)", async () => {
    const response = await fetch(`${facilitatorUrl}/supported`);
    expect(response.status).toBe(200);
    const { kinds } = (await response.json()) as {
      kinds: { x402Version: number; scheme: string; network: string }[];
    };
    expect(kinds).toContainEqual(
      expect.objectContaining({ x402Version: 2, scheme: "exact", network: "eip155:84532" }),
    );
    expect(kinds).toContainEqual(
      expect.objectContaining({ x402Version: 1, scheme: "exact", network: "base-sepolia" }),
    );
  });

  it("answers 400 to a body that is not JSON", async () => {
    const response = await fetch(`${facilitatorUrl}/verify`, { method: "POST", body: "{nope" });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: expect.any(String) });
  });

  it("verifies and settles a v2 payment on chain", async () => {
    const payerKey = PAYER_KEYS[1];
    const payer = privateKeyToAccount(payerKey).address;
    const amount = 10_000n; // 0.01 USDC
    const requirements = {
      scheme: "exact",
      network: "eip155:84532",
      amount: amount.toString(),
      asset,
      payTo: PAYEE,
      maxTimeoutSeconds: 300,
      extra: { name: "USDC", version: "2" },
    };
    const paymentPayload = {
      x402Version: 2,
      resource: {
        url: "http://localhost/job",
        description: "a test job",
        mimeType: "application/json",
      },
      accepted: requirements,
      payload: await exactPayload(payerKey, PAYEE, amount),
    };
    const request = { x402Version: 2, paymentPayload, paymentRequirements: requirements };
    const payeeBefore = await usdcBalance(rpcUrl, asset, PAYEE);

    const verify = await post("/verify", request);
    expect(verify).toEqual({
      status: 200,
      body: expect.objectContaining({ isValid: true, payer }),
    });

    const settle = await post("/settle", request);
    expect(settle.status).toBe(200);
    expect(settle.body).toMatchObject({ success: true, network: "eip155:84532", payer });
    expect(settle.body.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const receipt = await publicClient.getTransactionReceipt({
      hash: settle.body.transaction as Hex,
    });
    expect(receipt.status).toBe("success");
    expect(await usdcBalance(rpcUrl, asset, PAYEE)).toBe(payeeBefore + amount);

    // The same authorization again is refused (the on-chain nonce is spent).
    const replay = await post("/verify", request);
    expect(replay.body).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_nonce_already_used",
    });
  });

  it("verifies and settles a v1 payment on network base-sepolia (mapped to this 84532 chain)", async () => {
    const payerKey = PAYER_KEYS[2];
    const payer = privateKeyToAccount(payerKey).address;
    const amount = 20_000n;
    const requirements = {
      scheme: "exact",
      network: "base-sepolia",
      maxAmountRequired: amount.toString(),
      resource: "http://localhost/job",
      description: "a test job",
      mimeType: "application/json",
      payTo: PAYEE,
      maxTimeoutSeconds: 300,
      asset,
      extra: { name: "USDC", version: "2" },
    };
    const paymentPayload = {
      x402Version: 1,
      scheme: "exact",
      network: "base-sepolia",
      payload: await exactPayload(payerKey, PAYEE, amount),
    };
    const request = { x402Version: 1, paymentPayload, paymentRequirements: requirements };
    const payeeBefore = await usdcBalance(rpcUrl, asset, PAYEE);

    expect((await post("/verify", request)).body).toMatchObject({ isValid: true, payer });
    const settle = await post("/settle", request);
    expect(settle.body).toMatchObject({ success: true, network: "base-sepolia", payer });
    expect(await usdcBalance(rpcUrl, asset, PAYEE)).toBe(payeeBefore + amount);
  });
});
