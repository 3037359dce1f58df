// Direct settlement fails closed at start-up, against real anvil chains: an X402_RPC_URL serving another
// chain, one nobody listens on, and a settler account with no ETH are each refused (stderr names the
// variable to fix, exit 1, nothing listening); a settler low on ETH starts with a warning and the balance as
// a metric; and GET /health reports the route once its node has gone away, the way it reports the ledger.
// With two EVM networks settled directly, each network's route is checked the same way: its own RPC endpoint
// (X402_RPC_URL_<NET>), the settler's gas on its own chain, its own /health record and balance series.
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createPublicClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { EVM_NETWORKS as KNOWN_NETWORKS } from "../../templates/runtime/payments/evm/networks.js";
import { USDC_ABI } from "../../templates/runtime/payments/evm/onchain/checks.js";
import {
  formatEth,
  SETTLEMENT_GAS,
} from "../../templates/runtime/payments/evm/onchain/route-health.js";
import { transferTypedData } from "../../templates/runtime/payments/x402.js";
import { startServer } from "../../templates/runtime/server.js";
import { captureLogger, closeAfterEach, logText, makeAgent } from "../runtime/helpers.js";
import { refusedStart } from "../runtime/refused-start.js";
import {
  closedUrl as unusedUrl,
  healthOf,
  healthUntil,
  urlOf,
  type Health,
} from "../runtime/servers.js";
import { PAYEE, PAYER_KEYS, SETTLER_KEY } from "./accounts.js";
import { type Anvil, localChain, startAnvil } from "./anvil.js";
import { agentHealth } from "../runtime/answers.js";

const { asset, rpcUrl, facilitatorUrl } = inject("chain");

const directEnv = (rpc: string, key: string = SETTLER_KEY) => ({
  PORT: "0",
  PAY_TO: PAYEE,
  X402_NETWORK: "base-sepolia",
  X402_ASSET: asset,
  X402_RPC_URL: rpc,
  X402_SETTLER_KEY: key,
});

async function rpc(url: string, method: string, params: unknown[] = []): Promise<string> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result: string };
  return body.result;
}

/** A fresh account holding `wei` on the shared chain. */
async function accountWith(wei: bigint): Promise<`0x${string}`> {
  const key = generatePrivateKey();
  await rpc(rpcUrl, "anvil_setBalance", [privateKeyToAddress(key), `0x${wei.toString(16)}`]);
  return key;
}

let otherChain: Anvil;
let closedUrl: string;
beforeAll(async () => {
  otherChain = await startAnvil({ chainId: 31337 });
  closedUrl = await unusedUrl();
});
afterAll(async () => {
  await otherChain?.stop();
});

let server: Server | undefined;
closeAfterEach(() => server);

/** startServer refusing `env` (exit 1 before listening): what it wrote to stderr. */
const refusal = (env: Record<string, string>) => refusedStart(makeAgent(), env);

describe("start-up with direct settlement (X402_RPC_URL + X402_SETTLER_KEY)", () => {
  it("refuses an X402_RPC_URL that serves another chain, naming both chains and the variable", async () => {
    const stderr = await refusal(directEnv(otherChain.rpcUrl));
    expect(stderr).toMatch(/^Invalid configuration:\n {2}- /);
    expect(stderr).toContain(
      `X402_RPC_URL at ${otherChain.rpcUrl} serves chain 31337, but X402_NETWORK is base-sepolia (eip155:84532), chain 84532: point X402_RPC_URL at a node of chain 84532`,
    );
  });

  it("refuses an X402_RPC_URL nobody answers on: transient, exit 75 (the node may answer later)", async () => {
    const stderr = await refusedStart(makeAgent(), directEnv(closedUrl), 75);
    expect(stderr).toMatch(
      /^Cannot start yet \(a transient failure: exit 75, try again later\):\n/,
    );
    expect(stderr).toContain(
      `could not reach the JSON-RPC endpoint X402_RPC_URL at ${closedUrl}: unreachable (ECONNREFUSED). ` +
        "The server does not start without a base-sepolia (eip155:84532) node there: direct settlement sends every transfer through it; check the URL and that the node is up",
    );
  });

  it("refuses an X402_RPC_URL that answers no JSON-RPC (a web page): a setting to fix, exit 1, not retried", async () => {
    const page = createServer((_req, res) => res.end("<html>not a node</html>"));
    await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
      const stderr = await refusal(directEnv(url));
      expect(stderr).toMatch(/^Invalid configuration:\n/);
      expect(stderr).toContain("eth_chainId got HTTP 200, not a JSON-RPC result");
    } finally {
      page.close();
    }
  });

  it("never repeats the RPC URL's path or query (they often hold an API key)", async () => {
    const stderr = await refusedStart(
      makeAgent(),
      directEnv(`${closedUrl}/v2/secret-key?apikey=hidden`),
      75,
    );
    expect(stderr).toContain(`X402_RPC_URL at ${closedUrl}:`);
    expect(stderr).not.toMatch(/secret-key|hidden/);
  });

  it("never prints the RPC URL's user and password, query keys or key-like path", async () => {
    const withSecrets = `${closedUrl.replace("http://", "http://alice:s3cretPW@")}/v2/AbCdEf0123456789xyzKEY?api-key=hiddenKEY`;
    const stderr = await refusedStart(makeAgent(), directEnv(withSecrets), 75);
    expect(stderr).not.toMatch(/alice|s3cretPW|hiddenKEY|AbCdEf0123456789xyzKEY/);
    expect(stderr).toContain(`X402_RPC_URL at ${closedUrl}: unreachable (ECONNREFUSED)`);
  });

  it("refuses a settler account with no ETH, naming its address and X402_SETTLER_KEY", async () => {
    const key = await accountWith(0n);
    const stderr = await refusal(directEnv(rpcUrl, key));
    expect(stderr).toContain(
      `the settler account ${privateKeyToAddress(key)} (X402_SETTLER_KEY) holds 0 ETH on base-sepolia (eip155:84532), less than one settlement's gas`,
    );
    expect(stderr).toMatch(/every paid job would run and then fail to settle\. Send it ETH/);
    expect(stderr).toMatch(/or set X402_SETTLER_KEY to a funded account/);
    expect(stderr).not.toContain(key.slice(2)); // never the key itself
  });

  it("starts with a settler low on ETH, warning, and exports the balance and its threshold as metrics", async () => {
    const gasPrice = BigInt(await rpc(rpcUrl, "eth_gasPrice"));
    const perSettlement = gasPrice * SETTLEMENT_GAS;
    const balance = perSettlement * 10n; // 10 settlements' worth, under the 100 that warn
    const key = await accountWith(balance);
    const logger = captureLogger();
    server = await startServer(makeAgent(), {
      env: { ...directEnv(rpcUrl, key), METRICS_TOKEN: "a-long-enough-t0ken" },
      logger,
    });
    expect(logText(logger)).toContain(
      `warn the settler account ${privateKeyToAddress(key)} (X402_SETTLER_KEY) is low on gas money: ${formatEth(balance)}, enough for about 10 settlements`,
    );
    const text = await (
      await fetch(`${urlOf(server)}/metrics`, {
        headers: { authorization: "Bearer a-long-enough-t0ken" },
      })
    ).text();
    const gauge = (name: string) =>
      Number(new RegExp(`^${name}\\{network="eip155:84532"\\} (\\S+)$`, "m").exec(text)?.[1]);
    expect(gauge("agent_settler_balance_eth")).toBe(Number(balance) / 1e18);
    expect(gauge("agent_settler_balance_low_eth")).toBeGreaterThan(
      gauge("agent_settler_balance_eth"),
    );
    expect((await fetch(`${urlOf(server)}/health`)).status).toBe(200);
  });

  it("starts quietly with a well-funded settler", async () => {
    const key = await accountWith(10n ** 18n);
    const logger = captureLogger();
    server = await startServer(makeAgent(), { env: directEnv(rpcUrl, key), logger });
    expect(logText(logger)).toContain(
      `info the settler account ${privateKeyToAddress(key)} holds 1 ETH for gas`,
    );
    expect(logger.lines.filter((l) => l.level === "warn")).toEqual([]);
  });

  it("the gas counted per settlement covers a real transferWithAuthorization's, to a payee never paid before", async () => {
    const payer = privateKeyToAccount(PAYER_KEYS[3]);
    const network = {
      v1Name: "base-sepolia",
      caip2: "eip155:84532",
      chainId: 84532,
      asset,
      assetName: "USDC",
      assetVersion: "2",
    };
    const auth = {
      from: payer.address,
      to: privateKeyToAddress(generatePrivateKey()), // a new balance slot: the costly case
      value: "1",
      validAfter: "0",
      validBefore: String(Math.floor(Date.now() / 1000) + 3600),
      nonce: generatePrivateKey(),
    };
    const signature = await payer.signTypedData(transferTypedData(network, auth));
    const client = createPublicClient({ chain: localChain(rpcUrl), transport: http(rpcUrl) });
    const gas = await client.estimateContractGas({
      address: asset,
      abi: USDC_ABI,
      functionName: "transferWithAuthorization",
      args: [auth.from, auth.to, 1n, 0n, BigInt(auth.validBefore), auth.nonce, signature],
      account: privateKeyToAddress(SETTLER_KEY),
    });
    expect(gas).toBeGreaterThan(SETTLEMENT_GAS / 3n); // the right call was estimated
    expect(gas).toBeLessThan(SETTLEMENT_GAS);
  });
});

describe("start-up with a facilitator and X402_RPC_URL (on-chain checks)", () => {
  it("refuses an X402_RPC_URL of another chain too: every paid job's checks would fail", async () => {
    const stderr = await refusal({
      PORT: "0",
      PAY_TO: PAYEE,
      X402_NETWORK: "base-sepolia",
      X402_ASSET: asset,
      X402_FACILITATOR_URL: facilitatorUrl,
      X402_RPC_URL: otherChain.rpcUrl,
    });
    expect(stderr).toContain(
      `X402_RPC_URL at ${otherChain.rpcUrl} serves chain 31337, but X402_NETWORK is base-sepolia (eip155:84532), chain 84532: point X402_RPC_URL at a node of chain 84532. ` +
        "The server does not start without a base-sepolia (eip155:84532) node there: paid jobs are checked on chain through it",
    );
  });
});

/** A server on `env`, healthy, then `node` stops: its GET /health once the answer changed (bounded). */
async function healthOnceStopped(node: Anvil, env: Record<string, string>): Promise<Health> {
  server = await startServer(makeAgent(), { env, logger: captureLogger() });
  expect(await healthOf(urlOf(server))).toMatchObject({ status: 200, body: { status: "ok" } });
  await node.stop();
  return healthUntil(urlOf(server), (status) => status !== 200);
}

describe("GET /health with direct settlement", () => {
  it("says degraded (503) once the settlement route's node has gone away, as for the ledger", async () => {
    const node = await startAnvil({ chainId: 84532 }); // its default accounts are funded; SETTLER_KEY is one
    try {
      const last = await healthOnceStopped(node, directEnv(node.rpcUrl));
      expect(last).toEqual(
        agentHealth(["settlement route unreachable: paid jobs are refused until it is back"]),
      );
    } finally {
      await node.stop();
    }
  });
});

// Two EVM networks settled directly by one key: the shared anvil (Base Sepolia) and a second anvil as
// Arbitrum Sepolia (421614), whose RPC is X402_RPC_URL_ARBITRUM_SEPOLIA.
const ARB = KNOWN_NETWORKS["arbitrum-sepolia"];
const twoNetworks = (arbRpc: string, key: string = SETTLER_KEY) => ({
  PORT: "0",
  PAY_TO: PAYEE,
  X402_NETWORKS: "base-sepolia,arbitrum-sepolia",
  X402_ASSET_BASE_SEPOLIA: asset,
  X402_RPC_URL: rpcUrl,
  X402_RPC_URL_ARBITRUM_SEPOLIA: arbRpc,
  X402_SETTLER_KEY: key,
});

/** The value of `name`{network="<caip2>"} in a Prometheus text exposition (NaN when absent). */
const series = (text: string, name: string, caip2: string) =>
  Number(new RegExp(`^${name}\\{network="${caip2}"\\} (\\S+)$`, "m").exec(text)?.[1]);

describe("start-up with two networks settled directly (X402_NETWORKS + X402_SETTLER_KEY)", () => {
  let arb: Anvil;
  beforeAll(async () => {
    arb = await startAnvil({ chainId: ARB.chainId });
  });
  afterAll(async () => {
    await arb?.stop();
  });

  it("refuses when the second network's RPC serves another chain, naming X402_RPC_URL_<NET>", async () => {
    const stderr = await refusal(twoNetworks(rpcUrl)); // Base Sepolia's node given as Arbitrum Sepolia's
    expect(stderr).toContain(
      `X402_RPC_URL_ARBITRUM_SEPOLIA (else X402_RPC_URL) at ${rpcUrl} serves chain 84532, but X402_NETWORKS lists arbitrum-sepolia (eip155:421614), chain 421614: point X402_RPC_URL_ARBITRUM_SEPOLIA at a node of chain 421614. ` +
        "The server does not start without an arbitrum-sepolia (eip155:421614) node there: direct settlement sends every transfer through it",
    );
    expect(stderr).not.toContain("base-sepolia (eip155:84532)"); // the first network's route is fine
  });

  it("refuses when the second network's RPC is unreachable, naming it and its setting", async () => {
    const stderr = await refusedStart(makeAgent(), twoNetworks(`${closedUrl}/v2/secret-key`), 75);
    expect(stderr).toContain(
      `could not reach the JSON-RPC endpoint X402_RPC_URL_ARBITRUM_SEPOLIA (else X402_RPC_URL) at ${closedUrl}: unreachable (ECONNREFUSED). ` +
        "The server does not start without an arbitrum-sepolia (eip155:421614) node there",
    );
    expect(stderr).not.toContain("secret-key");
  });

  it("refuses a settler funded on the first chain but not on the second, naming the second network", async () => {
    const key = await accountWith(10n ** 18n); // 1 ETH on Base Sepolia, nothing on Arbitrum Sepolia
    const stderr = await refusal(twoNetworks(arb.rpcUrl, key));
    expect(stderr).toContain(
      `the settler account ${privateKeyToAddress(key)} (X402_SETTLER_KEY) holds 0 ETH on arbitrum-sepolia (eip155:421614), less than one settlement's gas`,
    );
    expect(stderr).toMatch(
      /every job paid on arbitrum-sepolia would run and then fail to settle\. Send it ETH on arbitrum-sepolia \(eip155:421614\)/,
    );
    expect(stderr).not.toMatch(/on base-sepolia/); // funded there: not a reason given
    expect(stderr).not.toContain(key.slice(2));
  });

  it("lists every network's problem in one refusal, in the offer's order", async () => {
    const key = await accountWith(0n); // unfunded on both chains
    const stderr = await refusal(twoNetworks(arb.rpcUrl, key));
    const lines = stderr.split("\n").filter((l) => l.startsWith("  - "));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain("holds 0 ETH on base-sepolia (eip155:84532)");
    expect(lines[1]).toContain("holds 0 ETH on arbitrum-sepolia (eip155:421614)");
  });

  it("starts with both routes sound; metrics show the settler's balance on each chain, /health each network", async () => {
    const key = await accountWith(3n * 10n ** 18n); // 3 ETH on Base Sepolia
    const arbBalance = 7n * 10n ** 17n; // 0.7 ETH on Arbitrum Sepolia
    await rpc(arb.rpcUrl, "anvil_setBalance", [
      privateKeyToAddress(key),
      `0x${arbBalance.toString(16)}`,
    ]);
    const logger = captureLogger();
    server = await startServer(makeAgent(), {
      env: { ...twoNetworks(arb.rpcUrl, key), METRICS_TOKEN: "a-long-enough-t0ken" },
      logger,
    });
    const log = logText(logger);
    expect(log).toContain(
      `info the settler account ${privateKeyToAddress(key)} holds 3 ETH for gas on base-sepolia (eip155:84532)`,
    );
    expect(log).toContain(
      `info the settler account ${privateKeyToAddress(key)} holds 0.7 ETH for gas on arbitrum-sepolia (eip155:421614)`,
    );
    const text = await (
      await fetch(`${urlOf(server)}/metrics`, {
        headers: { authorization: "Bearer a-long-enough-t0ken" },
      })
    ).text();
    expect(series(text, "agent_settler_balance_eth", "eip155:84532")).toBe(3);
    expect(series(text, "agent_settler_balance_eth", "eip155:421614")).toBe(0.7);
    for (const caip2 of ["eip155:84532", "eip155:421614"])
      expect(series(text, "agent_settler_balance_low_eth", caip2)).toBeGreaterThan(0);
    expect(await healthOf(urlOf(server))).toEqual(
      agentHealth([], {
        networks: { "eip155:84532": { status: "ok" }, "eip155:421614": { status: "ok" } },
      }),
    );
  });
});

describe("GET /health with two networks settled directly", () => {
  it("says degraded (503) when the second network's node goes away, naming it, while the first stays ok", async () => {
    const node = await startAnvil({ chainId: ARB.chainId }); // SETTLER_KEY is one of its funded accounts
    try {
      const last = await healthOnceStopped(node, twoNetworks(node.rpcUrl));
      expect(last).toEqual(
        agentHealth(
          [
            "settlement route of arbitrum-sepolia unreachable: paid jobs on that network are refused until it is back",
          ],
          {
            networks: {
              "eip155:84532": { status: "ok" },
              "eip155:421614": {
                status: "degraded",
                problems: ["settlement route unreachable: paid jobs are refused until it is back"],
              },
            },
          },
        ),
      );
    } finally {
      await node.stop();
    }
  });
});
