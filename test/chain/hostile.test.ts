// Issue 21: a hostile seller against the payers create-agent ships. `create-agent call` (the real CLI) and a
// client written by `create-agent client` (compiled in a fresh strict project, run with node) pay a server
// that declares echo at 0.01 USDC in /about and then asks something else; it settles on anvil whatever it
// is given, so a payer that signed too much would lose the money here. Balances are read on chain.
import { join } from "node:path";
import { type Hex } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildCli, makeTemp, runCli, tsProject, type TsProject } from "../cli/client-project.js";
import { runCall } from "../cli/call-helpers.js";
import { PAYEE } from "./accounts.js";
import { balance, fundedPayer } from "./call-seller.js";
import {
  HOSTILE_PRICE,
  type HostileAsk,
  type HostileMode,
  hostileOffer,
  startHostile,
} from "./hostile-server.js";
import {
  BASE_SEPOLIA_USDC,
  deployUsdc,
  ensureBaseSepoliaUsdc,
  mintUsdc,
  usdcBalance,
} from "./usdc.js";

const { rpcUrl } = inject("chain");

const SCRIPT = `import { AgentCallError, createAgentClient } from "./hostile-client.js";

const [baseUrl = ""] = process.argv.slice(2);
const agent = createAgentClient({ baseUrl, maxPrice: "0.01" });
try {
  const result = await agent.echo({ message: "hi" }, { jobId: "hostile-job" });
  console.log(JSON.stringify({ ok: true, output: result.output, payment: result.payment ?? null }));
} catch (error) {
  if (!(error instanceof AgentCallError)) throw error;
  console.log(JSON.stringify({ ok: false, errorType: error.errorType, status: error.status, message: error.message }));
}
`;

interface Outcome {
  /** The payer's loss on chain, in atomic units. */
  lost: bigint;
  /** Payment headers that reached the server. */
  payments: number;
  settled: number;
  elsewhere: number;
  streamed: number;
  ok: boolean;
  message: string;
}

type Payer = (url: string, key: Hex) => Promise<{ ok: boolean; message: string }>;

const payers: Record<"call" | "client", Payer> = {
  async call(url, key) {
    const r = await runCall([url, "echo", "--input", "message=hi", "--max-price", "0.01"], {
      env: { X402_PAYER_KEY: key },
    });
    return { ok: r.exitCode === 0, message: `${r.stderr}${r.stdout}` };
  },
  async client(url, key) {
    const r = await project.run("pay.js", [url], { X402_PAYER_KEY: key });
    if (r.exitCode !== 0) return { ok: false, message: r.stderr };
    const printed = JSON.parse(r.stdout) as { ok: boolean; message?: string; payment?: unknown };
    return { ok: printed.ok, message: printed.message ?? JSON.stringify(printed) };
  },
};

async function against(
  payer: keyof typeof payers,
  mode: HostileMode,
  ask?: (url: string) => HostileAsk,
): Promise<Outcome> {
  const server = await startHostile(mode, rpcUrl, ask);
  try {
    // 5 USDC: enough to lose 1 USDC, which a fixed payer must never do.
    const { key, address } = await fundedPayer(5_000_000n);
    const before = await balance(address);
    const { ok, message } = await payers[payer](server.url, key);
    return {
      lost: before - (await balance(address)),
      payments: server.payments.length,
      settled: server.settled.length,
      elsewhere: server.elsewhere,
      streamed: server.streamed,
      ok,
      message,
    };
  } finally {
    await server.close();
  }
}

let project: TsProject;
let removeTemp: () => Promise<void>;

beforeAll(async () => {
  await buildCli();
  await ensureBaseSepoliaUsdc(rpcUrl);
  const temp = await makeTemp("hostile");
  removeTemp = temp.remove;
  project = await tsProject(temp.dir, "node");
  const server = await startHostile("honest", rpcUrl);
  try {
    const r = await runCli(["client", server.url, "-o", join(temp.dir, "src/hostile-client.ts")]);
    expect(r.exitCode, r.stderr).toBe(0);
  } finally {
    await server.close();
  }
  await project.write("pay.ts", SCRIPT);
  const compiled = await project.compile();
  expect(compiled.ok, compiled.output).toBe(true);
}, 180_000);

afterAll(() => removeTemp?.());

/**
 * `payer` against the seller in `mode` fails, its message saying each of `says`, after `payments` paid
 * requests, the payer having lost `lost`. What happened, for more checks.
 */
async function refusedBy(
  payer: keyof typeof payers,
  mode: HostileMode,
  says: string[],
  payments: number,
  lost: bigint,
) {
  const r = await against(payer, mode);
  expect(r.ok).toBe(false);
  for (const text of says) expect(r.message).toContain(text);
  expect(r.payments).toBe(payments);
  expect(r.lost).toBe(lost);
  return r;
}

describe.each(["call", "client"] as const)("%s against a hostile seller", (payer) => {
  it("an honest seller is paid exactly its declared price, once", async () => {
    const payeeBefore = await balance(PAYEE);
    const r = await against(payer, "honest");
    expect(r.ok, r.message).toBe(true);
    expect(r.lost).toBe(HOSTILE_PRICE);
    expect(await balance(PAYEE)).toBe(payeeBefore + HOSTILE_PRICE);
    expect(r.payments).toBe(1);
    if (payer === "call") expect(r.message).toContain("paid 0.01 USDC on eip155:84532");
    else expect(r.message).toContain('"amount":"0.01"');
  });

  it("a v2 offer whose amount is a JSON number (beside a decoy) is refused: nothing signed, nothing moved", async () => {
    const says = [
      'accepts[0]: "amount" (the amount an x402 v2 payer signs) is the number 1000000',
      "nothing was signed",
    ];
    await refusedBy(payer, "v2-number-amount", says, 0, 0n);
  });

  it("a v1 offer whose amount and maxAmountRequired disagree is refused: nothing signed, nothing moved", async () => {
    const says = ['"amount" is "1" while "maxAmountRequired" is "1000000"', "nothing was signed"];
    await refusedBy(payer, "v1-both-fields", says, 0, 0n);
  });

  it("a payment that is not an EIP-3009 authorization (Permit2) is checked before it leaves and never sent", async () => {
    const says = ["is not an EIP-3009 transfer authorization", "it was not sent"];
    await refusedBy(payer, "permit2", says, 0, 0n);
  });

  it("a payment window of years (maxTimeoutSeconds) is checked before it leaves and never sent", async () => {
    const says = ["longer than the job's deadline plus an hour", "it was not sent"];
    await refusedBy(payer, "long-window", says, 0, 0n);
  });

  it("a 402 whose body never ends is refused at 256 KiB, nothing signed", async () => {
    const r = await refusedBy(payer, "endless-402", ["larger than 256 KiB"], 0, 0n);
    // The caller hung up early: far less than the 1 GiB the server would have sent.
    expect(r.streamed).toBeLessThan(256 * 1024 * 1024);
  });

  it("a result whose body never ends is refused at 16 MiB; the payer lost the price, no more", async () => {
    const r = await refusedBy(payer, "endless-result", ["larger than 16 MiB"], 1, HOSTILE_PRICE);
    expect(r.streamed).toBeLessThan(512 * 1024 * 1024);
  });

  it("a redirect of the paid POST is never followed or retried, and is named", async () => {
    const r = await refusedBy(payer, "redirect", ["redirect to /elsewhere"], 1, 0n);
    expect(r.message).not.toMatch(/connection failed|failed \d+ times/);
    expect(r.elsewhere).toBe(0);
  });

  it("an oversized header on the paid answer is named and not retried", async () => {
    const r = await refusedBy(payer, "huge-header", ["headers are larger than"], 1, HOSTILE_PRICE);
    expect(r.message).not.toMatch(/connection failed|failed \d+ times/);
  });
});

it("call: an /about whose body never ends is refused at 1 MiB", async () => {
  const r = await against("call", "endless-about");
  expect(r.ok).toBe(false);
  expect(r.message).toContain("larger than 1 MiB");
  expect(r.payments).toBe(0);
});

/** 1 USDC (100x the declared price) written every way a hostile 402 might, in each amount field. */
const FORMS: Array<[string, unknown]> = [
  ["a decimal string above the price", "1000000"],
  ["a JSON number", 1_000_000],
  ["exponent notation", "1e6"],
  ["hex", "0xf4240"],
  ["a decimal point", "1000000.0"],
  ["leading white space", " 1000000"],
  ["a negative number", "-10000"],
  ["a JSON number equal to the price", 10_000],
];

describe.each(["call", "client"] as const)("%s: every amount form, in each field", (payer) => {
  it.each(FORMS)("v2 amount as %s: refused, nothing signed, nothing moved", async (_, amount) => {
    const r = await against(payer, "honest", (url) => ({
      header: { x402Version: 2, resource: { url }, accepts: [hostileOffer({ amount })] },
      body: {},
    }));
    expect(r.ok, r.message).toBe(false);
    expect(r.message).toMatch(/nothing was signed/);
    expect([r.payments, r.lost]).toEqual([0, 0n]);
  });

  it.each(FORMS)(
    "v1 maxAmountRequired as %s: refused, nothing signed, nothing moved",
    async (_, maxAmountRequired) => {
      const r = await against(payer, "honest", () => ({
        body: { x402Version: 1, accepts: [hostileOffer({ maxAmountRequired }, true)] },
      }));
      expect(r.ok, r.message).toBe(false);
      expect(r.message).toMatch(/nothing was signed/);
      expect([r.payments, r.lost]).toEqual([0, 0n]);
    },
  );

  it("v2 with maxAmountRequired above an honest amount: the fields disagree, refused", async () => {
    const r = await against(payer, "honest", (url) => ({
      header: {
        x402Version: 2,
        resource: { url },
        accepts: [hostileOffer({ maxAmountRequired: "1000000" })],
      },
      body: {},
    }));
    expect(r.message).toContain('"maxAmountRequired" is "1000000" while "amount" is "10000"');
    expect([r.ok, r.payments, r.lost]).toEqual([false, 0, 0n]);
  });
});

describe("call: an offer in another ERC-20 than the network's USDC", () => {
  let other: Hex;
  beforeAll(async () => {
    // Circle's FiatTokenV2_2 again at another address, with another EIP-712 name: not the USDC of eip155:84532.
    other = await deployUsdc(rpcUrl, { name: "Tether USD", version: "2" });
  });
  const ask = (url: string): HostileAsk => ({
    header: {
      x402Version: 2,
      resource: { url },
      accepts: [hostileOffer({ asset: other, extra: { name: "Tether USD", version: "2" } })],
    },
    body: {},
  });

  it("is refused before anything is signed, naming the token and --asset; with --asset it pays and reports the token signed", async () => {
    const server = await startHostile("honest", rpcUrl, ask);
    try {
      const key = generatePrivateKey();
      const address = privateKeyToAddress(key);
      await mintUsdc(rpcUrl, other, address, 1_000_000n);
      const otherBalance = () => usdcBalance(rpcUrl, other, address);
      const args = [server.url, "echo", "--input", "message=hi", "--max-price", "0.01"];
      const refused = await runCall(args, { env: { X402_PAYER_KEY: key } });
      expect(refused.exitCode).toBe(1);
      expect(refused.stderr).toContain(
        `asks to be paid in the token ${other} on eip155:84532, which is not that network's USDC (${BASE_SEPOLIA_USDC}): to pay in it anyway, pass --asset <address>`,
      );
      expect(refused.stderr).toContain("nothing was signed");
      expect(server.payments).toHaveLength(0);
      expect(await otherBalance()).toBe(1_000_000n);

      const paid = await runCall([...args, "--asset", other], { env: { X402_PAYER_KEY: key } });
      expect(paid.exitCode, paid.stderr).toBe(0);
      expect(paid.stderr).toContain(
        `paid 10000 atomic units of the token ${other} (not USDC: allowed with --asset) on eip155:84532`,
      );
      expect(server.payments).toHaveLength(1);
      expect(await otherBalance()).toBe(1_000_000n - HOSTILE_PRICE);
    } finally {
      await server.close();
    }
  });

  it("a generated client refuses it too, by the same rule (guard-asset.ts): nothing signed", async () => {
    const r = await against("client", "honest", ask);
    expect(r.ok).toBe(false);
    expect(r.message).toContain(
      `token ${other} on eip155:84532, which is not a USDC this client knows`,
    );
    expect([r.payments, r.lost]).toEqual([0, 0n]);
  });
});
