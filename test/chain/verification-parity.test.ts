// Verification parity with the reference facilitator, on a real chain: anvil (Prague, so EIP-7702 delegations exist)
// with Circle's FiatTokenV2_2, through both settlement routes. Each payment below passes a purely offline check
// but is refused by the token at settlement: a high-s signature, v = 0/1, validAfter equal to the current second, a
// blacklisted payer, a paused token, and an EIP-7702 delegated account whose delegate does not implement EIP-1271.
// Such an authorization must be refused before the handler runs (402 `payment`, a reason naming the cause), move
// nothing, leave its nonce unused, and a second attempt with it must not run the handler either: otherwise one
// authorization buys unlimited free runs. Both routes set X402_RPC_URL (payment.rpcUrl), so the server can simulate
// transferWithAuthorization with eth_call before running anything.
//
// Also: ERC-6492-wrapped signatures and `from` addresses with a bad EIP-55 checksum get their own reasons; both x402
// names of the network ("base-sepolia", "eip155:84532") settle in v1 and v2 payments on both routes; and a job whose
// deadline is an hour away is paid by the official `@x402/fetch` client with its defaults and settles.
//
// Every case sets up its payment so that the token itself would refuse it (checked with an eth_call of
// transferWithAuthorization, "tokenVerdict"): the tests show the server refusing up front what settlement would.
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import {
  BaseError,
  concat,
  ContractFunctionRevertedError,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  http,
  recoverTypedDataAddress,
  type Hex,
} from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRANSFER_WITH_AUTHORIZATION } from "../../templates/runtime/payments/x402.js";
import {
  job,
  makeAgent,
  nowSeconds,
  post,
  signAuthorization,
  unb64,
  v1Header,
  v2Header,
  type AuthorizationParams,
  type TestAgent,
} from "../runtime/helpers.js";
import { DEPLOYER_KEY, SETTLER_KEY } from "./accounts.js";
import {
  asset,
  balance,
  chain,
  client,
  domain,
  facilitatorUrl,
  freshPayer as fundedPayer,
  nonceUsed,
  type RouteApp,
  type RouteName,
  rpcUrl,
  startRouteApp,
} from "./context.js";
import { MULTICALL3_ADDRESS, transferWithAuthorizationCall, USDC_ABI } from "./usdc.js";

const deployer = privateKeyToAccount(DEPLOYER_KEY); // holds every USDC role: pauser, blacklister, minter, owner
const admin = createWalletClient({
  account: deployer,
  chain,
  transport: http(rpcUrl),
  pollingInterval: 20,
});
const PRICE = 10_000n; // echo's price: 0.01 USDC

/** secp256k1's group order: USDC's ECRecover (like EIP-2) accepts only s <= N / 2. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
/** ERC-6492's suffix for signatures of smart wallets that are not deployed yet. */
const ERC6492_MAGIC = "0x6492649264926492649264926492649264926492649264926492649264926492" as const;

const freshPayer = (usdc: bigint = 10n * PRICE) => fundedPayer(usdc);

type Payload = Awaited<ReturnType<typeof signAuthorization>>;

// ---- the token's own controls, as its admin ----

async function asAdmin(functionName: string, args: readonly unknown[] = []): Promise<void> {
  const hash = await admin.writeContract({ address: asset, abi: USDC_ABI, functionName, args });
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  if (receipt.status !== "success") throw new Error(`${functionName} reverted (tx ${hash})`);
}
const isPaused = async () =>
  (await client.readContract({ address: asset, abi: USDC_ABI, functionName: "paused" })) as boolean;
const isBlacklisted = async (address: Hex) =>
  (await client.readContract({
    address: asset,
    abi: USDC_ABI,
    functionName: "isBlacklisted",
    args: [address],
  })) as boolean;

/**
 * What the token says to this payment right now: "ok", or its revert reason. An eth_call of the 7-argument
 * transferWithAuthorization(..., bytes signature), as settlement would send it (from the settler's account).
 */
async function tokenVerdict(payload: Payload): Promise<string> {
  try {
    await client.simulateContract({
      ...transferWithAuthorizationCall(asset, payload),
      account: privateKeyToAccount(SETTLER_KEY).address,
    });
    return "ok";
  } catch (err) {
    const reverted =
      err instanceof BaseError
        ? err.walk((e) => e instanceof ContractFunctionRevertedError)
        : undefined;
    if (reverted instanceof ContractFunctionRevertedError && reverted.reason)
      return reverted.reason;
    return err instanceof BaseError ? err.shortMessage : String(err);
  }
}

/** The address viem recovers from the payload's signature (over the token's domain), or the error it throws. */
async function recovered(payload: Payload): Promise<string> {
  const a = payload.authorization;
  try {
    return await recoverTypedDataAddress({
      domain,
      types: TRANSFER_WITH_AUTHORIZATION,
      primaryType: "TransferWithAuthorization",
      message: {
        ...a,
        value: BigInt(a.value),
        validAfter: BigInt(a.validAfter),
        validBefore: BigInt(a.validBefore),
      },
      signature: payload.signature,
    });
  } catch (err) {
    return `error: ${err instanceof BaseError ? err.shortMessage : String(err)}`;
  }
}

// ---- signature surgery ----

const parts = (signature: Hex) => ({
  r: signature.slice(2, 66),
  s: BigInt(`0x${signature.slice(66, 130)}`),
  v: parseInt(signature.slice(130, 132), 16),
});

/** The same signature with s' = n - s and v flipped (27 <-> 28): ecrecover yields the same signer. */
function toHighS(signature: Hex): Hex {
  const { r, s, v } = parts(signature);
  const flipped = v === 27 ? 28 : 27;
  return `0x${r}${(SECP256K1_N - s).toString(16).padStart(64, "0")}${flipped.toString(16)}`;
}

/** The same signature with v = 0/1 (the y parity) instead of 27/28. */
function toYParity(signature: Hex): Hex {
  const { v } = parts(signature);
  return `0x${signature.slice(2, 130)}${(v - 27).toString(16).padStart(2, "0")}`;
}

/** ERC-6492: abi.encode(factory, factoryCalldata, innerSignature) ++ the 32-byte magic suffix. */
function wrapErc6492(inner: Hex, factory: Hex, factoryCalldata: Hex): Hex {
  return concat([
    encodeAbiParameters(
      [{ type: "address" }, { type: "bytes" }, { type: "bytes" }],
      [factory, factoryCalldata, inner],
    ),
    ERC6492_MAGIC,
  ]);
}

/** `address` with one letter's case flipped: mixed case, but not its EIP-55 checksum. */
function badChecksum(address: Hex): Hex {
  const chars = address.split("");
  for (let i = 2; i < chars.length; i++) {
    const c = chars[i]!;
    if (!/[a-fA-F]/.test(c)) continue;
    chars[i] = c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase();
    const flipped = chars.join("");
    if (/[a-f]/.test(flipped.slice(2)) && /[A-F]/.test(flipped.slice(2))) return flipped as Hex;
    chars[i] = c; // would be all one case (a valid spelling): try another letter
  }
  throw new Error(`cannot misspell ${address}`);
}

// ---- EIP-7702 ----

/**
 * A fresh EOA that delegated itself (EIP-7702, a type-4 transaction the deployer sponsors) to Multicall3: code, but
 * no isValidSignature. USDC sees code at `from`, so it checks the signature with EIP-1271, which the delegate does
 * not implement: the token refuses the EOA's perfectly good ECDSA signature ("invalid signature").
 */
async function delegatedPayer(): Promise<PrivateKeyAccount> {
  const eoa = await freshPayer();
  const authorization = await admin.signAuthorization({
    account: eoa,
    contractAddress: MULTICALL3_ADDRESS,
  }); // nonce: the EOA's current one (the deployer sends the transaction)
  expect(authorization.address.toLowerCase()).toBe(MULTICALL3_ADDRESS.toLowerCase());
  const hash = await admin.sendTransaction({
    authorizationList: [authorization],
    to: eoa.address,
    // Calls the EOA, now running Multicall3's code: proves the delegation is in effect in this very transaction.
    data: encodeFunctionData({
      abi: [
        {
          type: "function",
          name: "getBlockNumber",
          stateMutability: "view",
          inputs: [],
          outputs: [{ type: "uint256" }],
        },
      ],
      functionName: "getBlockNumber",
    }),
  });
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  expect(receipt.status).toBe("success");
  expect(receipt.type).toBe("eip7702");
  const code = await client.getCode({ address: eoa.address });
  expect(code?.toLowerCase()).toBe(`0xef0100${MULTICALL3_ADDRESS.slice(2).toLowerCase()}`);
  return eoa;
}

// ---- one app per route, each paying its own fresh payee ----

type Route = RouteApp<TestAgent>;

const startRoute = (name: RouteName): Promise<Route> =>
  startRouteApp(
    name,
    makeAgent(),
    name === "direct" ? { settlerKey: SETTLER_KEY, rpcUrl } : { facilitatorUrl, rpcUrl },
  );

const routes = {} as Record<RouteName, Route>;
beforeAll(async () => {
  expect(await isPaused()).toBe(false); // another file left the token paused?
  routes.direct = await startRoute("direct");
  routes.facilitator = await startRoute("facilitator");
});
afterAll(async () => {
  for (const route of Object.values(routes)) await route.app.close();
});

/** A real authorization of `payer` paying `route`'s price to its payee. */
const sign = (route: Route, payer: PrivateKeyAccount, p: AuthorizationParams = {}) =>
  signAuthorization(payer, { to: route.payee, value: String(PRICE), domain, ...p });

const money = async (route: Route, payer: Hex) => ({
  payer: await balance(payer),
  payee: await balance(route.payee),
});
const runs = (route: Route) => route.agent.calls.echo ?? 0;

/**
 * Sends `header` twice (two different jobs, the same authorization). Both must be 402 `payment` without running the
 * handler; the first must name the cause. Nothing moves and the nonce stays unused.
 */
async function expectRefusedTwice(
  route: Route,
  payload: Payload,
  header: Record<string, string>,
  reason: RegExp,
) {
  const from = getAddress(payload.authorization.from.toLowerCase()); // the payer, however `from` is spelt
  const before = await money(route, from);
  const runsBefore = runs(route);
  const answers = [];
  for (const attempt of [1, 2]) {
    const res = await post(route.app.url, job("echo", { text: `attempt ${attempt}` }), header);
    answers.push(res);
    expect.soft(res.status, `attempt ${attempt}: ${res.text}`).toBe(402);
    expect.soft(res.body?.error_type, `attempt ${attempt}`).toBe("payment");
    if (attempt === 1) expect.soft(res.body?.error, "the reason").toMatch(reason);
    expect.soft(res.headers.get("payment-response"), `attempt ${attempt}`).toBeNull();
    expect.soft(runs(route) - runsBefore, `handler runs after attempt ${attempt}`).toBe(0);
  }
  expect.soft(await money(route, from), "payer and payee balances").toEqual(before);
  expect
    .soft(await nonceUsed(from, payload.authorization.nonce), "nonce used on chain")
    .toBe(false);
  return answers;
}

const v2 = (route: Route, payload: Payload) => ({
  "payment-signature": v2Header(route.accepted, payload),
});

describe.each<RouteName>(["direct", "facilitator"])("%s route", (name) => {
  const route = () => routes[name];

  it("a high-s signature (s' = n - s, v flipped): 402 naming the high s, no run, nothing moves, twice", async () => {
    const r = route();
    const payer = await freshPayer();
    const good = await sign(r, payer);
    const payload = { ...good, signature: toHighS(good.signature) };
    // Setup: the malleated signature is what we mean, viem still recovers the payer, the token refuses it.
    expect(parts(payload.signature).s > SECP256K1_N / 2n).toBe(true);
    expect(parts(payload.signature).v).toBe(parts(good.signature).v === 27 ? 28 : 27);
    expect(await recovered(payload)).toBe(payer.address);
    expect(await tokenVerdict(good)).toBe("ok");
    expect(await tokenVerdict(payload)).toMatch(/invalid signature 's' value/);

    await expectRefusedTwice(r, payload, v2(r, payload), /high s/i);
  });

  it.each([0, 1])(
    "a signature with v = %i instead of 27/28: 402 saying only v = 27 or 28, no run, nothing moves, twice",
    async (v) => {
      const r = route();
      const payer = await freshPayer();
      let good: Payload | undefined;
      for (let i = 0; i < 64 && good === undefined; i++) {
        const candidate = await sign(r, payer); // a fresh nonce each time: v is 27 or 28 about half the time
        if (parts(candidate.signature).v === 27 + v) good = candidate;
      }
      expect(good, `no signature with v = ${27 + v} in 64 tries`).toBeDefined();
      const payload = { ...good!, signature: toYParity(good!.signature) };
      expect(parts(payload.signature).v).toBe(v);
      expect(await recovered(payload)).toBe(payer.address);
      expect(await tokenVerdict(payload)).toMatch(/invalid signature 'v' value/);

      await expectRefusedTwice(r, payload, v2(r, payload), /\bv\b.*\b(27|28)\b/);
    },
  );

  it("validAfter equal to the current second: 402 (it must be strictly before now), no run, nothing moves, twice", async () => {
    const r = route();
    // Both attempts must happen within the second the authorization names: a second later it is simply valid.
    // Start right after a second boundary; if the attempts still straddle one, try again with a fresh payer.
    for (let attempt = 1; ; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 10));
      const second = nowSeconds();
      const payer = await freshPayer();
      const payload = await sign(r, payer, { validAfter: String(second) });
      const before = await money(r, payer.address);
      const runsBefore = runs(r);
      const answers = [
        await post(r.app.url, job("echo", { text: "now?" }), v2(r, payload)),
        await post(r.app.url, job("echo", { text: "now? again" }), v2(r, payload)),
      ];
      const withinTheSecond = nowSeconds() === second;
      if (!withinTheSecond && attempt < 5) continue;
      expect(withinTheSecond, "both attempts within the second named by validAfter").toBe(true);
      for (const [i, res] of answers.entries()) {
        expect.soft(res.status, `attempt ${i + 1}: ${res.text}`).toBe(402);
        expect.soft(res.body?.error_type, `attempt ${i + 1}`).toBe("payment");
        expect.soft(runs(r) - runsBefore, `handler runs after attempt ${i + 1}`).toBe(0);
      }
      expect.soft(answers[0]!.body?.error, "the reason").toMatch(/strictly before now/i);
      expect.soft(await money(r, payer.address)).toEqual(before);
      expect.soft(await nonceUsed(payer.address, payload.authorization.nonce)).toBe(false);
      return;
    }
  });

  it("a payer the token has blacklisted: 402 naming the blacklist, no run, nothing moves, twice", async () => {
    const r = route();
    const payer = await freshPayer();
    const payload = await sign(r, payer);
    await asAdmin("blacklist", [payer.address]);
    try {
      expect(await isBlacklisted(payer.address)).toBe(true);
      expect(await recovered(payload)).toBe(payer.address);
      expect(await tokenVerdict(payload)).toMatch(/account is blacklisted/);

      await expectRefusedTwice(r, payload, v2(r, payload), /blacklisted/i);
    } finally {
      await asAdmin("unBlacklist", [payer.address]);
    }
    expect(await isBlacklisted(payer.address)).toBe(false);
  });

  it("the token paused: 402 naming the pause, no run, nothing moves, twice", async () => {
    const r = route();
    const payer = await freshPayer(); // minted before the pause: mint is paused too
    const payload = await sign(r, payer);
    await asAdmin("pause");
    try {
      expect(await isPaused()).toBe(true);
      expect(await tokenVerdict(payload)).toMatch(/paused/);

      await expectRefusedTwice(r, payload, v2(r, payload), /paused/i);
    } finally {
      await asAdmin("unpause"); // the chain is shared by every chain test
    }
    expect(await isPaused()).toBe(false);
    expect(await tokenVerdict(payload)).toBe("ok"); // it was the pause, and only the pause
  });

  it("an EIP-7702 account delegated to a contract without EIP-1271: 402 invalid signature, no run, nothing moves, twice", async () => {
    const r = route();
    const payer = await delegatedPayer();
    expect(await balance(payer.address)).toBe(10n * PRICE);
    const payload = await sign(r, payer); // an ordinary ECDSA signature by the EOA's key
    expect(await recovered(payload)).toBe(payer.address);
    expect(await tokenVerdict(payload)).toMatch(/invalid signature/);

    await expectRefusedTwice(r, payload, v2(r, payload), /invalid signature/i);
  });

  it("an ERC-6492-wrapped signature: 402 naming ERC-6492, not 'malformed'; no run, nothing moves", async () => {
    const r = route();
    const payer = await freshPayer();
    const good = await sign(r, payer);
    // A valid inner signature by `from` itself: unwrapping would make it look fine offline; the token sees the
    // wrapped bytes and cannot use them.
    const signature = wrapErc6492(good.signature, MULTICALL3_ADDRESS, "0xdeadbeef");
    expect(signature.endsWith(ERC6492_MAGIC.slice(2))).toBe(true);
    const payload = { ...good, signature };
    expect(await tokenVerdict(payload)).toMatch(/invalid signature length/);

    const [first] = await expectRefusedTwice(r, payload, v2(r, payload), /ERC-6492/);
    expect(first!.body?.error).not.toMatch(/malformed/);
  });

  it("`from` with a bad EIP-55 checksum: 402 naming EIP-55, not 'malformed'; no run, nothing moves", async () => {
    const r = route();
    const payer = await freshPayer();
    const good = await sign(r, payer); // signed over the correctly checksummed address: the same 20 bytes
    const from = badChecksum(payer.address);
    expect(from.toLowerCase()).toBe(payer.address.toLowerCase());
    expect(from).not.toBe(payer.address);
    const payload = { ...good, authorization: { ...good.authorization, from } };
    expect(await recovered(payload)).toMatch(/^error: .*address/i); // viem rejects the spelling outright

    const [first] = await expectRefusedTwice(r, payload, v2(r, payload), /EIP-55/);
    expect(first!.body?.error).not.toMatch(/malformed/);
  });

  it.each<[string, string, string, (r: Route, payload: Payload) => Record<string, string>]>([
    [
      'a v2 payment naming the network "base-sepolia" (its v1 name) settles',
      "v2 by v1 name",
      "payment-response",
      (r, payload) => ({
        "payment-signature": v2Header({ ...r.accepted, network: "base-sepolia" }, payload),
      }),
    ],
    [
      'a v1 payment (X-PAYMENT) naming the network "eip155:84532" (its v2 name) settles',
      "v1 by v2 name",
      "x-payment-response",
      (_r, payload) => ({ "x-payment": v1Header(payload, "eip155:84532") }),
    ],
  ])("%s", async (_title, text, receiptHeader, paymentHeader) => {
    const r = route();
    const payer = await freshPayer();
    const payload = await sign(r, payer);
    const before = await money(r, payer.address);
    const runsBefore = runs(r);
    const res = await post(r.app.url, job("echo", { text }), paymentHeader(r, payload));
    expect(res.status, res.text).toBe(200);
    expect(res.body.output).toEqual({ text });
    expect(unb64(res.headers.get(receiptHeader)!)).toMatchObject({ success: true });
    expect(runs(r)).toBe(runsBefore + 1);
    expect(await money(r, payer.address)).toEqual({
      payer: before.payer - PRICE,
      payee: before.payee + PRICE,
    });
    expect(await nonceUsed(payer.address, payload.authorization.nonce)).toBe(true);
  });

  it("a job due in one hour is paid by @x402/fetch with its defaults and settles", async () => {
    const r = route();
    const payer = await freshPayer();
    const body = job("echo", { text: "an hour" }, { deadline: nowSeconds() + 3600 });

    // The offer covers the deadline plus the settlement margin: a client signing validBefore = now + maxTimeout
    // (what @x402/fetch does) gets an authorization the gate accepts.
    const offer = await post(r.app.url, body);
    expect(offer.status).toBe(402);
    const accepts = unb64(offer.headers.get("payment-required")!).accepts[0];
    expect
      .soft(nowSeconds() + accepts.maxTimeoutSeconds, "now + the offer's maxTimeoutSeconds")
      .toBeGreaterThanOrEqual(body.deadline + 15 - 1);

    const before = await money(r, payer.address);
    const runsBefore = runs(r);
    // Only spend controls are off: the local token is not a USDC address the client knows.
    const x402 = new x402Client()
      .register("eip155:84532", new ExactEvmScheme(toClientEvmSigner(payer)))
      .setSpendControls(false);
    // What the client sends, to see the authorization it signed.
    const sent: string[] = [];
    const recording: typeof fetch = (input, init) => {
      const header = new Headers(init?.headers ?? (input instanceof Request ? input.headers : {}));
      const payment = header.get("payment-signature");
      if (payment) sent.push(payment);
      return fetch(input, init);
    };
    const res = await wrapFetchWithPayment(recording, x402)(`${r.app.url}/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    expect(sent, "payments @x402/fetch sent").toHaveLength(1);
    const signed = unb64(sent[0]!).payload.authorization;
    expect(signed.validAfter).toBe("0"); // the client's defaults, untouched
    expect
      .soft(Number(signed.validBefore), "validBefore @x402/fetch signed")
      .toBeGreaterThanOrEqual(body.deadline + 15);
    expect(res.status, text).toBe(200);
    expect(JSON.parse(text).output).toEqual({ text: "an hour" });
    const receipt = unb64(res.headers.get("payment-response")!);
    expect(receipt).toMatchObject({ success: true, payer: payer.address });
    expect((await client.getTransactionReceipt({ hash: receipt.transaction })).status).toBe(
      "success",
    );
    expect(runs(r)).toBe(runsBefore + 1);
    expect(await money(r, payer.address)).toEqual({
      payer: before.payer - PRICE,
      payee: before.payee + PRICE,
    });
  });
});
