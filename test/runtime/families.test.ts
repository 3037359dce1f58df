// Network families as folders (templates/runtime/payments/family.ts, features.ts's FAMILIES):
//   - a project without the Solana folder (payments/svm/ deleted, features.ts's `// feature: solana`
//     lines dropped, as `npm run remove -- solana` leaves it) still type-checks with the project's
//     compiler options, and configuration naming Solana fails closed with the command that adds it;
//   - a third family is its folder plus one registry line: a test family registered here goes
//     through configuration and into the 402's offers without any other core file knowing it.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAMILIES } from "../../templates/runtime/features.js";
import { PaymentError } from "../../templates/runtime/errors.js";
import type { NetworkFamily } from "../../templates/runtime/payments/family.js";
import type { NetworkScheme } from "../../templates/runtime/payments/scheme.js";
import { resolveConfig } from "../../templates/runtime/config.js";
import { job, makeAgent, PAY_TO, post, recordingSettler, startApp, unb64 } from "./helpers.js";

const root = new URL("../..", import.meta.url).pathname;
const SOLANA_MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";

describe("a project without the Solana folder", () => {
  const work = mkdtempSync(join(tmpdir(), "runtime-without-solana-"));
  const runtime = join(work, "src/runtime");
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  beforeAll(() => {
    cpSync(join(root, "templates/runtime"), runtime, { recursive: true });
    rmSync(join(runtime, "payments/svm"), { recursive: true });
    const features = join(runtime, "features.ts");
    const kept = readFileSync(features, "utf8")
      .split("\n")
      .filter((line) => !/\/\/ feature: solana$/.test(line));
    writeFileSync(features, kept.join("\n"));
    writeFileSync(join(work, "package.json"), '{ "type": "module" }\n');
    symlinkSync(join(root, "node_modules"), join(work, "node_modules"), "dir");
    // The project's compiler options (templates/project/tsconfig.json, which src/runtime/tsconfig.json
    // extends), without its build cache: nothing is written.
    cpSync(join(root, "templates/project/tsconfig.json"), join(work, "tsconfig.json"));
    writeFileSync(
      join(runtime, "tsconfig.json"),
      JSON.stringify({
        extends: "../../tsconfig.json",
        compilerOptions: { incremental: false, noEmit: true },
        include: ["."],
        exclude: [],
      }),
    );
  });

  it("type-checks with the project's compiler options", async () => {
    const tsc = join(root, "node_modules/typescript/bin/tsc");
    await promisify(execFile)(process.execPath, [tsc, "-p", join(runtime, "tsconfig.json")], {
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: { stdout?: string }) => {
      const errors = (err.stdout ?? String(err)).split("\n").filter((l) => /error TS/.test(l));
      throw new Error(
        `the runtime without payments/svm does not type-check:\n${errors.join("\n")}`,
      );
    });
  }, 180_000);

  it("refuses configuration naming Solana, saying how to add it; EVM alone still starts", async () => {
    const config: typeof import("../../templates/runtime/config.js") = await import(
      join(runtime, "config.ts")
    );
    const problems = (env: Record<string, string>): string[] => {
      try {
        config.resolveConfig({ devMode: false, env });
        return [];
      } catch (err) {
        return (err as { problems: string[] }).problems;
      }
    };
    const evm = { PAY_TO, X402_FACILITATOR_URL: "https://x402.org/facilitator" };
    expect(problems({ ...evm, X402_NETWORKS: `base,${SOLANA_MAINNET}` })).toEqual([
      `X402_NETWORKS names ${SOLANA_MAINNET}, which this project does not include: run npm run add -- solana`,
    ]);
    expect(problems({ ...evm, X402_NETWORK: "solana-devnet" })).toEqual([
      "X402_NETWORK names solana-devnet, which this project does not include: run npm run add -- solana",
    ]);
    expect(
      problems({
        ...evm,
        X402_NETWORK: "base",
        PAY_TO_SOLANA: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
      }),
    ).toEqual([
      "PAY_TO_SOLANA is set: it is for Solana, which this project does not include: run npm run add -- solana",
    ]);
    expect(problems({ ...evm, X402_NETWORK: "base", SOLANA_FEE_PAYER_KEY: "secret" })).toEqual([
      "SOLANA_FEE_PAYER_KEY is set: it is for Solana, which this project does not include: run npm run add -- solana",
    ]);
    // Names no family knows are still told the names there are, now without Solana's.
    expect(problems({ ...evm, X402_NETWORK: "bitcoin" })).toEqual([
      'X402_NETWORK is "bitcoin": use "base", "base-sepolia", "polygon", "arbitrum", "arbitrum-sepolia", "avalanche", "ethereum" or "eip155:<chainId>"',
    ]);
    expect(problems({ ...evm, X402_NETWORK: "base" })).toEqual([]);
  }, 60_000);
});

/** A family that knows "test:<name>" networks, paid to TEST_PAY_TO in "TESTUSD"; it never takes a payment. */
function testFamily(): NetworkFamily {
  const scheme = (net: { written: string; payTo: string }): NetworkScheme => ({
    family: "test",
    caip2: net.written,
    v1Name: net.written,
    offer: (capability, resourceUrl) => ({
      network: { family: "test", v1Name: net.written, caip2: net.written, asset: "TESTUSD" },
      payTo: net.payTo,
      amount: capability.priceAtomic,
      maxTimeoutSeconds: 60,
      resourceUrl,
      description: capability.name,
      extra: { test: true },
    }),
    verify: async () => {
      throw new PaymentError("the test family takes no payment");
    },
    replayKey: (p) => p.network,
    confirm: async () => undefined,
    settle: async () => {
      throw new Error("unreachable");
    },
    describe: () => "test payments are never settled",
  });
  return {
    id: "test",
    names: { known: [], shapes: ["test:<name>"] },
    perNetworkSettings: ["TEST_NODE_URL"],
    cannotWait: "are never paid in test money",
    parse: (name) =>
      /^test:[a-z0-9-]+$/.test(name) ? { family: "test", v1Name: name, caip2: name } : undefined,
    readConfig: ({ read }) => {
      const payTo = read.fromEnv("TEST_PAY_TO");
      if (payTo.value === undefined) read.problems.push("TEST_PAY_TO is not set");
      return {
        network: (written) => ({ network: { caip2: written, v1Name: written, asset: "TESTUSD" } }),
        entry: (written, listing) =>
          payTo.value === undefined
            ? undefined
            : {
                family: "test",
                written,
                network: listing.network,
                payTo: payTo.value,
                settlement: { kind: "test" },
              },
      };
    },
    createScheme: (net) => scheme(net),
    describeRoute: () => "test payments are never settled",
    facts: () => ({ asset: { address: "TESTUSD" } }),
  };
}

describe("a third family: its folder plus one registry line", () => {
  beforeAll(() => {
    FAMILIES.push(testFamily()); // the registry line
  });
  afterAll(() => {
    FAMILIES.splice(
      FAMILIES.findIndex((f) => f.id === "test"),
      1,
    );
  });

  it("is configured beside EVM networks, in the seller's order, and refused without its own setting", () => {
    const env = { X402_NETWORKS: "test:net-1,base-sepolia", PAY_TO, TEST_PAY_TO: "test-payee" };
    const config = resolveConfig({ devMode: false, env, payment: { settler: recordingSettler() } });
    expect(config.payment!.networks.map((n) => [n.family, n.network.caip2, n.payTo])).toEqual([
      ["test", "test:net-1", "test-payee"],
      ["evm", "eip155:84532", PAY_TO],
    ]);
    expect(() =>
      resolveConfig({
        devMode: false,
        env: { ...env, TEST_PAY_TO: "" },
        payment: { settler: recordingSettler() },
      }),
    ).toThrow(/TEST_PAY_TO is not set/);
  });

  it("has its per-network settings checked: one naming no listed network is refused", () => {
    const env = { X402_NETWORKS: "test:net-1,base-sepolia", PAY_TO, TEST_PAY_TO: "test-payee" };
    const resolve = (extra: Record<string, string>) =>
      resolveConfig({
        devMode: false,
        env: { ...env, ...extra },
        payment: { settler: recordingSettler() },
      });
    expect(() => resolve({ TEST_NODE_URL_TEST_NET_1: "http://127.0.0.1:1" })).not.toThrow();
    expect(() => resolve({ TEST_NODE_URL_TEST_NET_2: "http://127.0.0.1:1" })).toThrow(
      /TEST_NODE_URL_TEST_NET_2 is set, but no listed network's settings end in _TEST_NET_2 .*TEST_NODE_URL_TEST_NET_1/,
    );
  });

  it("is offered in the 402 (v2 header; not in the v1 body, which knows no such network)", async () => {
    const app = await startApp(makeAgent(), {
      devMode: false,
      payment: { payTo: PAY_TO, settler: recordingSettler() },
      env: { X402_NETWORKS: "base-sepolia,test:net-1", TEST_PAY_TO: "test-payee" },
    });
    try {
      const res = await post(app.url, job("echo", { text: "x" }));
      expect(res.status).toBe(402);
      const required = unb64(res.headers.get("payment-required")!);
      expect(required.accepts.map((a: { network: string }) => a.network)).toEqual([
        "eip155:84532",
        "test:net-1",
      ]);
      expect(required.accepts[1]).toMatchObject({
        scheme: "exact",
        network: "test:net-1",
        asset: "TESTUSD",
        payTo: "test-payee",
        amount: "10000",
        extra: { test: true },
      });
      expect(res.body.accepts.map((a: { network: string }) => a.network)).toEqual(["base-sepolia"]);
    } finally {
      await app.close();
    }
  });
});
