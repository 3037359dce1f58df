// Configuration: every refusal names its variable, all problems are reported at once, options win.
import { describe, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import { ConfigError, resolveConfig, type AppOptions } from "../../templates/runtime/config.js";
import { selectLedger } from "../../templates/runtime/ledger/select.js";
import { thrownBy } from "../thrown.js";
import { PAY_TO, captureLogger, logText, makeAgent, recordingSettler } from "./helpers.js";

const FACILITATOR = "https://facilitator.example.com/x402";
const PROD_ENV = { PAY_TO, X402_NETWORK: "base-sepolia", X402_FACILITATOR_URL: FACILITATOR };
const SETTLER = `0x${"ab".repeat(32)}`;
const BASE_OPTIONS = { payTo: PAY_TO, network: "base-sepolia" };
const BASE_SEPOLIA = {
  v1Name: "base-sepolia",
  caip2: "eip155:84532",
  chainId: 84532,
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  assetName: "USDC",
  assetVersion: "2",
};

const problems = (options: AppOptions): string[] =>
  thrownBy(ConfigError, () => resolveConfig(options)).problems;

describe("production refusals", () => {
  it("missing PAY_TO, X402_NETWORK and a settlement route: all reported, each with what to do", () => {
    const p = problems({ env: {} });
    expect(p).toHaveLength(3);
    expect(p[0]).toMatch(/^PAY_TO is not set: set it to the address/);
    expect(p[1]).toMatch(/^X402_NETWORK is not set: .*"base".*"base-sepolia"/);
    expect(p[2]).toMatch(
      /^no settlement route: set X402_FACILITATOR_URL .* or X402_RPC_URL and X402_SETTLER_KEY/,
    );
  });

  it("the ConfigError message lists every problem", () => {
    expect(() => resolveConfig({ env: {} })).toThrow(
      /Invalid configuration:\n {2}- PAY_TO[^\n]*\n {2}- X402_NETWORK/,
    );
  });

  it("empty values count as unset", () => {
    expect(
      problems({ env: { PAY_TO: "", X402_NETWORK: "", X402_FACILITATOR_URL: "" } }),
    ).toHaveLength(3);
  });

  it.each([
    [{ PAY_TO: "0x123" }, /^PAY_TO is "0x123": set it to the address/],
    [
      { PAY_TO: "0x70997970c51812DC3A010C7d01b50e0d17dc79C8" },
      /^PAY_TO is .*checksummed or all lowercase/,
    ], // bad checksum
    [
      { PAY_TO: "0x0000000000000000000000000000000000000000" },
      /^PAY_TO is the zero address, which USDC cannot pay/,
    ],
    [{ X402_ASSET: "usdc" }, /^X402_ASSET is "usdc"/],
    [
      { X402_NETWORK: "mainnet" },
      /^X402_NETWORK is "mainnet": use "base", "base-sepolia", "polygon", .* "solana-devnet", "eip155:<chainId>" or "solana:<genesis hash prefix>"/,
    ],
    [{ X402_MAX_TIMEOUT_SECONDS: "5" }, /^X402_MAX_TIMEOUT_SECONDS is "5"/],
    [{ X402_MAX_TIMEOUT_SECONDS: "soon" }, /^X402_MAX_TIMEOUT_SECONDS is "soon"/],
    [{ PORT: "http" }, /^PORT is "http"/],
    [{ PORT: "70000" }, /^PORT is "70000"/],
    [{ MAX_BODY_BYTES: "0" }, /^MAX_BODY_BYTES is "0"/],
    [
      { LOG_LEVEL: "verbose" },
      /^LOG_LEVEL is "verbose": set it to one of debug, info, warn, error/,
    ],
    [{ PUBLIC_URL: "agent.example.com" }, /^PUBLIC_URL is "agent.example.com"/],
    // The right shape, but no URL (they once crashed createApp with a TypeError).
    [
      { PUBLIC_URL: "http://agent.example.com:99999" },
      /^PUBLIC_URL is "http:\/\/agent.example.com:99999"/,
    ],
    [
      { PUBLIC_URL: "http://[zz]" },
      /^PUBLIC_URL is "http:\/\/\[zz\]": set it to the service's base URL/,
    ],
    [{ SERVICE_DEV_MODE: "yes" }, /^SERVICE_DEV_MODE is "yes": set it to "true"/],
    [{ SERVICE_DEV_MODE: "1" }, /^SERVICE_DEV_MODE is "1"/],
    // A network's own setting naming no listed network (a typo) would leave that network on its defaults.
    [
      { X402_RPC_URL_BASESEPOLIA: "http://127.0.0.1:8545" },
      /^X402_RPC_URL_BASESEPOLIA is set, but no listed network's settings end in _BASESEPOLIA \(X402_NETWORK: base-sepolia; their X402_RPC_URL settings: X402_RPC_URL_BASE_SEPOLIA\)/,
    ],
    [{ X402_ASSET_NAME_BASE: "USD Coin" }, /^X402_ASSET_NAME_BASE is set, but no listed network/],
  ])("%j is refused", (env, message) => {
    const p = problems({ env: { ...PROD_ENV, ...env } });
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(message);
  });

  it("eip155:<chainId> without asset settings names all three variables", () => {
    const p = problems({
      env: { PAY_TO, X402_NETWORK: "eip155:31337", X402_FACILITATOR_URL: FACILITATOR },
    });
    expect(p).toHaveLength(3);
    expect(p[0]).toMatch(/^X402_ASSET is not set: network eip155:31337 has no built-in USDC/);
    expect(p[1]).toMatch(/^X402_ASSET_NAME is not set/);
    expect(p[2]).toMatch(/^X402_ASSET_VERSION is not set/);
  });

  it("createApp throws the ConfigError too", () => {
    expect(() => createApp(makeAgent(), { env: {}, logger: captureLogger() })).toThrow(ConfigError);
  });
});

describe("dev mode", () => {
  it("SERVICE_DEV_MODE=true needs no payment settings", () => {
    const config = resolveConfig({ env: { SERVICE_DEV_MODE: "true" } });
    expect(config.devMode).toBe(true);
    expect(config.payment).toBeUndefined();
  });

  it("SERVICE_DEV_MODE=false is production", () => {
    expect(problems({ env: { SERVICE_DEV_MODE: "false" } })).toHaveLength(3);
  });

  it("is refused with NODE_ENV=production, from env or option", () => {
    expect(problems({ env: { SERVICE_DEV_MODE: "true", NODE_ENV: "production" } })[0]).toMatch(
      /dev mode is on while NODE_ENV is "production"/,
    );
    expect(problems({ devMode: true, env: { NODE_ENV: "production" } })[0]).toMatch(/NODE_ENV/);
    // However it is spelled.
    for (const spelled of ["Production", " PRODUCTION "])
      expect(problems({ env: { SERVICE_DEV_MODE: "true", NODE_ENV: spelled } })[0]).toMatch(
        /dev mode is on while NODE_ENV is/,
      );
  });

  it("validates payment settings that are given", () => {
    expect(problems({ devMode: true, env: { PAY_TO: "nope" } })[0]).toMatch(/^PAY_TO is "nope"/);
  });

  it("resolves payment settings when complete", () => {
    const config = resolveConfig({ devMode: true, env: PROD_ENV });
    expect(config.payment?.network?.caip2).toBe("eip155:84532");
  });
});

describe("resolution", () => {
  it("MCP and MCP_DEADLINE_SECONDS: off, a deadline, and what is refused", () => {
    expect(
      resolveConfig({
        env: { ...PROD_ENV, MCP: "off", MCP_DEADLINE_SECONDS: "120", MCP_PROGRESS_SECONDS: "2" },
      }).mcp,
    ).toEqual({ enabled: false, deadlineSeconds: 120, progressSeconds: 2 });
    expect(() => resolveConfig({ env: { ...PROD_ENV, MCP_PROGRESS_SECONDS: "0" } })).toThrow(
      /MCP_PROGRESS_SECONDS is "0": set it to a whole number of seconds from 1 to 3600/,
    );
    expect(() =>
      resolveConfig({ env: { ...PROD_ENV, MCP: "no", MCP_DEADLINE_SECONDS: "0" } }),
    ).toThrow(/MCP is "no": set it to "off"[\s\S]*MCP_DEADLINE_SECONDS is "0"/);
    expect(() =>
      resolveConfig({
        env: { ...PROD_ENV, MAX_DEADLINE_SECONDS: "60", MCP_DEADLINE_SECONDS: "61" },
      }),
    ).toThrow(/MCP_DEADLINE_SECONDS is "61": set it to a whole number of seconds from 1 to 60/);
  });

  it("HOST and ALLOWED_HOSTS: read, normalised, and what is refused", () => {
    const config = resolveConfig({
      env: { ...PROD_ENV, HOST: "127.0.0.1", ALLOWED_HOSTS: " Agent.Example.com., [::1] ,box_1,," },
    });
    expect(config.host).toBe("127.0.0.1");
    expect(config.allowedHosts).toEqual(["agent.example.com", "[::1]", "box_1"]);
    expect(resolveConfig({ env: { ...PROD_ENV, ALLOWED_HOSTS: "*" } }).allowedHosts).toBe("*");
    expect(resolveConfig({ env: { ...PROD_ENV, HOST: "::" } }).host).toBe("::");
    expect(
      problems({
        env: {
          ...PROD_ENV,
          HOST: "http://0.0.0.0",
          ALLOWED_HOSTS: "https://a.example,b.example:443,ok.example",
        },
      }),
    ).toEqual([
      expect.stringMatching(
        /^HOST is "http:\/\/0\.0\.0\.0": set it to the address to listen on, e\.g\. 127\.0\.0\.1/,
      ),
      expect.stringMatching(
        /^ALLOWED_HOSTS has "https:\/\/a\.example", "b\.example:443": list host names without scheme or port/,
      ),
    ]);
  });

  it("defaults", () => {
    const config = resolveConfig({ env: PROD_ENV });
    expect(config).toEqual({
      devMode: false,
      port: 3000,
      maxBodyBytes: 1048576,
      maxOutputBytes: 4 * 1024 * 1024,
      resultCacheMaxBytes: 64 * 1024 * 1024,
      reconcileSeconds: 15,
      shutdownTimeoutSeconds: 30,
      maxDeadlineSeconds: 604800,
      logLevel: "info",
      corsOrigin: "*",
      // Below the MCP clients' 60 s request timeout, with room for the settlement.
      mcp: { enabled: true, deadlineSeconds: 45, progressSeconds: 10 },
      a2a: { enabled: true, deadlineSeconds: 300, taskMemoryBytes: 64 * 1024 * 1024 },
      // Async jobs (the queue feature): a worker in this process, answers kept a day.
      queue: { worker: true, concurrency: 4, resultTtlSeconds: 86400, lockSeconds: 30 },
      allowedHosts: [], // and no HOST: every interface
      trustProxy: false, // X-Forwarded-* ignored
      payment: {
        payTo: PAY_TO,
        maxTimeoutSeconds: 300,
        settlement: {
          kind: "facilitator",
          url: FACILITATOR,
          urls: [FACILITATOR],
          auth: { headers: [] },
        },
        settleTimeoutSeconds: 30,
        maxJobsPerPayer: 8,
        network: BASE_SEPOLIA,
        networks: [
          {
            family: "evm",
            written: "base-sepolia",
            network: BASE_SEPOLIA,
            payTo: PAY_TO,
            settlement: {
              kind: "facilitator",
              url: FACILITATOR,
              urls: [FACILITATOR],
              auth: { headers: [] },
            },
          },
        ],
      },
    });
  });

  it("reads every variable", () => {
    const config = resolveConfig({
      env: {
        ...PROD_ENV,
        PORT: "8080",
        PAY_TO: PAY_TO.toLowerCase(),
        X402_NETWORK: "base",
        X402_MAX_TIMEOUT_SECONDS: "60",
        PUBLIC_URL: "https://a.example.com/",
        MAX_BODY_BYTES: "1000",
        LOG_LEVEL: "debug",
      },
    });
    expect(config).toMatchObject({
      port: 8080,
      maxBodyBytes: 1000,
      logLevel: "debug",
      publicUrl: "https://a.example.com",
    });
    expect(config.payment?.payTo).toBe(PAY_TO); // checksummed
    expect(config.payment?.maxTimeoutSeconds).toBe(60);
    expect(config.payment?.network).toMatchObject({
      v1Name: "base",
      chainId: 8453,
      assetName: "USD Coin",
    });
  });

  it("reads the ledger, limits, shutdown and metrics settings", () => {
    const config = resolveConfig({
      env: {
        ...PROD_ENV,
        REDIS_URL: "redis://:secret@redis.internal:6380/0",
        REDIS_KEY_PREFIX: "shop:",
        MAX_OUTPUT_BYTES: "2048",
        RESULT_CACHE_MAX_BYTES: "0",
        SHUTDOWN_TIMEOUT_SECONDS: "5",
        METRICS_PORT: "9464",
        METRICS_TOKEN: "0123456789abcdef0123",
      },
    });
    expect(config).toMatchObject({
      redis: { url: "redis://:secret@redis.internal:6380/0", keyPrefix: "shop:" },
      maxOutputBytes: 2048,
      resultCacheMaxBytes: 0,
      shutdownTimeoutSeconds: 5,
      metrics: { port: 9464, host: "127.0.0.1", token: "0123456789abcdef0123" },
    });
  });

  it.each<[Record<string, string>, RegExp]>([
    [{ REDIS_URL: "http://localhost:6379" }, /REDIS_URL is not a redis:\/\/ or rediss:\/\/ URL/],
    [
      { REDIS_URL: "redis://:hunter2@x:1/", REDIS_KEY_PREFIX: "has space" },
      /REDIS_KEY_PREFIX .*printable/,
    ],
    [{ REDIS_KEY_PREFIX: "a:" }, /REDIS_KEY_PREFIX is set but REDIS_URL is not/],
    [
      { MAX_OUTPUT_BYTES: "10" },
      /MAX_OUTPUT_BYTES is "10": set it to a whole number of bytes, at least 1024/,
    ],
    [{ SHUTDOWN_TIMEOUT_SECONDS: "-1" }, /SHUTDOWN_TIMEOUT_SECONDS/],
    [{ METRICS_TOKEN: "short" }, /METRICS_TOKEN is too short/],
    [{ METRICS_PORT: "99999" }, /METRICS_PORT is "99999"/],
    [{ METRICS_HOST: "0.0.0.0" }, /METRICS_HOST is set but METRICS_PORT is not/],
    [{ WORKER: "off" }, /WORKER is off but REDIS_URL is not set/],
    [{ WORKER: "no" }, /WORKER is "no": set it to "off"/],
    [{ WORKER_CONCURRENCY: "0" }, /WORKER_CONCURRENCY is "0"/],
    [{ JOB_RESULT_TTL_SECONDS: "5" }, /JOB_RESULT_TTL_SECONDS is "5"/],
    [{ A2A_TASK_MEMORY_BYTES: "1000" }, /A2A_TASK_MEMORY_BYTES is "1000": .*at least 65536/],
  ])("refuses %o", (env, message) => {
    expect(() => resolveConfig({ env: { ...PROD_ENV, ...env } })).toThrow(message);
  });

  it("A2A_TASK_MEMORY_BYTES bounds the A2A tasks the in-memory ledger keeps (64 MiB unless set)", async () => {
    expect(resolveConfig({ env: PROD_ENV }).a2a.taskMemoryBytes).toBe(64 * 1024 * 1024);
    const config = resolveConfig({ env: { ...PROD_ENV, A2A_TASK_MEMORY_BYTES: "200000" } });
    const ledger = selectLedger(config, "shop", captureLogger(), undefined);
    const task = "t".repeat(40_000); // 80 000 bytes as counted (UTF-16): two fit, not three
    for (const id of ["a", "b", "c"]) await ledger.putRecord!(`a2a-task:${id}`, task, 60_000);
    expect(await ledger.getRecord!("a2a-task:a")).toBeUndefined();
    expect(await ledger.getRecord!("a2a-task:c")).toBe(task);
    // Unset, the same three are all kept.
    const roomy = selectLedger(
      resolveConfig({ env: PROD_ENV }),
      "shop",
      captureLogger(),
      undefined,
    );
    for (const id of ["a", "b", "c"]) await roomy.putRecord!(`a2a-task:${id}`, task, 60_000);
    expect(await roomy.getRecord!("a2a-task:a")).toBe(task);
  });

  it("never repeats a REDIS_URL, which may hold a password", () => {
    try {
      resolveConfig({
        env: { ...PROD_ENV, REDIS_URL: "redis://:hunter2@x:1/", REDIS_KEY_PREFIX: "a b" },
      });
      expect.unreachable();
    } catch (err) {
      expect(String(err)).not.toContain("hunter2");
    }
  });

  it("custom chain with all asset settings", () => {
    const token = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
    const config = resolveConfig({
      env: {
        ...PROD_ENV,
        X402_NETWORK: "eip155:31337",
        X402_ASSET: token.toLowerCase(),
        X402_ASSET_NAME: "Local USD",
        X402_ASSET_VERSION: "1",
      },
    });
    expect(config.payment?.network).toEqual({
      v1Name: "eip155:31337",
      caip2: "eip155:31337",
      chainId: 31337,
      asset: token,
      assetName: "Local USD",
      assetVersion: "1",
    });
  });

  it("overrides a known network's token", () => {
    const config = resolveConfig({ env: { ...PROD_ENV, X402_ASSET_NAME: "Renamed" } });
    expect(config.payment?.network).toMatchObject({
      assetName: "Renamed",
      assetVersion: "2",
      chainId: 84532,
    });
  });

  it("options win over env", () => {
    const config = resolveConfig({
      devMode: false,
      payment: {
        payTo: PAY_TO,
        network: "base",
        maxTimeoutSeconds: 120,
        facilitatorUrl: "https://opt.example.com/f",
        settleTimeoutSeconds: 5,
      },
      maxBodyBytes: 10,
      publicUrl: "https://opt.example.com",
      corsOrigin: "https://app.example.com",
      env: {
        X402_FACILITATOR_URL: FACILITATOR,
        X402_SETTLE_TIMEOUT_SECONDS: "50",
        CORS_ORIGIN: "*",
        SERVICE_DEV_MODE: "true",
        PAY_TO: "0x0000000000000000000000000000000000000001",
        X402_NETWORK: "base-sepolia",
        MAX_BODY_BYTES: "99",
        PUBLIC_URL: "https://env.example.com",
        X402_MAX_TIMEOUT_SECONDS: "30",
      },
    });
    expect(config.devMode).toBe(false);
    expect(config.payment?.payTo).toBe(PAY_TO);
    expect(config.payment?.network?.v1Name).toBe("base");
    expect(config.payment?.maxTimeoutSeconds).toBe(120);
    expect(config.maxBodyBytes).toBe(10);
    expect(config.publicUrl).toBe("https://opt.example.com");
    expect(config.corsOrigin).toBe("https://app.example.com");
    expect(config.payment?.settlement).toEqual({
      kind: "facilitator",
      url: "https://opt.example.com/f",
      urls: ["https://opt.example.com/f"],
      auth: { headers: [] },
    });
    expect(config.payment?.settleTimeoutSeconds).toBe(5);
  });

  it("devMode option wins over a bad SERVICE_DEV_MODE and over SERVICE_DEV_MODE=true", () => {
    expect(resolveConfig({ devMode: true, env: { SERVICE_DEV_MODE: "banana" } }).devMode).toBe(
      true,
    );
    expect(problems({ devMode: false, env: { SERVICE_DEV_MODE: "true" } })).toHaveLength(3);
  });

  it("an option naming a bad value is blamed as an option", () => {
    expect(problems({ payment: { payTo: "0x1", network: "base" }, env: {} })[0]).toMatch(
      /^option payment.payTo is "0x1"/,
    );
  });
});

describe("settlement route", () => {
  const BASE = { PAY_TO, X402_NETWORK: "base-sepolia" };
  const RPC = "https://rpc.example.com/v2/secret-api-key";

  it("a facilitator URL is a route", () => {
    const config = resolveConfig({ env: PROD_ENV });
    expect(config.payment?.settlement).toEqual({
      kind: "facilitator",
      url: FACILITATOR,
      urls: [FACILITATOR],
      auth: { headers: [] },
    });
    expect(config.payment?.rpcUrl).toBeUndefined();
  });

  it("RPC URL + settler key is the direct route", () => {
    const config = resolveConfig({
      env: { ...BASE, X402_RPC_URL: RPC, X402_SETTLER_KEY: SETTLER },
    });
    expect(config.payment?.settlement).toEqual({
      kind: "direct",
      rpcUrl: RPC,
      settlerKey: SETTLER,
    });
    expect(config.payment?.rpcUrl).toBe(RPC);
  });

  it("a facilitator with an RPC URL: facilitator route plus on-chain checks", () => {
    const config = resolveConfig({ env: { ...PROD_ENV, X402_RPC_URL: RPC } });
    expect(config.payment?.settlement?.kind).toBe("facilitator");
    expect(config.payment?.rpcUrl).toBe(RPC);
  });

  it("an RPC URL alone is no route", () => {
    const p = problems({ env: { ...BASE, X402_RPC_URL: RPC } });
    expect(p).toEqual([expect.stringMatching(/^no settlement route/)]);
  });

  it("a settler key needs an RPC URL", () => {
    const p = problems({ env: { ...BASE, X402_SETTLER_KEY: SETTLER } });
    expect(p).toEqual([expect.stringMatching(/^X402_SETTLER_KEY is set but X402_RPC_URL is not/)]);
  });

  it("a facilitator and a settler key together: choose one", () => {
    const p = problems({
      env: { ...PROD_ENV, X402_RPC_URL: RPC, X402_SETTLER_KEY: SETTLER },
    });
    expect(p).toEqual([
      expect.stringMatching(
        /^X402_FACILITATOR_URL and X402_SETTLER_KEY are set together: choose one settlement route/,
      ),
    ]);
  });

  it("the settler key is never repeated in a message", () => {
    const bad = `0x${"z".repeat(64)}`;
    const p = problems({ env: { ...BASE, X402_RPC_URL: RPC, X402_SETTLER_KEY: bad } });
    expect(p).toEqual(["X402_SETTLER_KEY is not a private key: set it to 0x and 64 hex digits"]);
    expect(p.join()).not.toContain("zzzz");
  });

  it("URLs are checked; an RPC URL is not repeated (it may hold an API key)", () => {
    const p = problems({
      env: { ...BASE, X402_FACILITATOR_URL: "ftp://f.example.com", X402_RPC_URL: "secret-key" },
    });
    expect(p[0]).toMatch(/^X402_FACILITATOR_URL is "ftp:\/\/f.example.com": set it to/);
    expect(p[1]).toMatch(/^X402_RPC_URL is not an http\(s\) URL/);
    expect(p.join()).not.toContain("secret-key");
  });

  it.each([["0"], ["601"], ["soon"]])("X402_SETTLE_TIMEOUT_SECONDS=%s is refused", (value) => {
    expect(problems({ env: { ...PROD_ENV, X402_SETTLE_TIMEOUT_SECONDS: value } })[0]).toMatch(
      /^X402_SETTLE_TIMEOUT_SECONDS is/,
    );
  });

  it("reads X402_SETTLE_TIMEOUT_SECONDS", () => {
    const config = resolveConfig({ env: { ...PROD_ENV, X402_SETTLE_TIMEOUT_SECONDS: "90" } });
    expect(config.payment?.settleTimeoutSeconds).toBe(90);
  });

  it("options: rpcUrl + settlerKey; a custom settler counts as a route", () => {
    const direct = resolveConfig({
      env: {},
      payment: { payTo: PAY_TO, network: "base-sepolia", rpcUrl: RPC, settlerKey: SETTLER },
    });
    expect(direct.payment?.settlement?.kind).toBe("direct");
    const settler = recordingSettler();
    const custom = resolveConfig({
      env: {},
      payment: { payTo: PAY_TO, network: "base-sepolia", settler },
    });
    expect(custom.payment?.settlement).toEqual({ kind: "custom", settler });
    expect(
      problems({
        env: { X402_FACILITATOR_URL: FACILITATOR },
        payment: { ...BASE_OPTIONS, settler },
      }),
    ).toEqual([
      expect.stringMatching(/^option payment.settler and X402_FACILITATOR_URL are set together/),
    ]);
  });

  it("dev mode needs no route", () => {
    expect(resolveConfig({ env: { ...BASE, SERVICE_DEV_MODE: "true" } }).payment?.settlement).toBe(
      undefined,
    );
  });

  it("createApp logs the route at startup, never the key, and no 'not settled' warning", () => {
    const logger = captureLogger();
    createApp(makeAgent(), {
      env: { ...BASE, X402_RPC_URL: RPC, X402_SETTLER_KEY: SETTLER },
      logger,
    });
    const text = logText(logger);
    expect(text).toMatch(
      /payments settle directly: .* via https:\/\/rpc.example.com from the X402_SETTLER_KEY account/,
    );
    expect(text).toMatch(/checked on chain via https:\/\/rpc.example.com/);
    expect(text).not.toContain(SETTLER.slice(2));
    expect(text).not.toContain("secret-api-key");
    expect(text).not.toMatch(/not settled/);

    const viaFacilitator = captureLogger();
    createApp(makeAgent(), { env: PROD_ENV, logger: viaFacilitator });
    expect(logText(viaFacilitator)).toMatch(
      /payments settle through the x402 facilitator at https:\/\/facilitator.example.com\/x402; no on-chain checks/,
    );
  });
});

describe("PUBLIC_URL naming this machine only", () => {
  const warned = (env: Record<string, string>) => {
    const logger = captureLogger();
    createApp(makeAgent(), { env, logger });
    return logText(logger).match(/PUBLIC_URL is \S+, an address of this machine only[^"]*/)?.[0];
  };
  it.each([
    "http://localhost:8080",
    "http://127.0.0.1:3000",
    "http://[::1]:8080/",
    "http://api.localhost",
  ])("%s: production warns at start-up, naming the fix", (url) => {
    expect(warned({ ...PROD_ENV, PUBLIC_URL: url })).toMatch(
      /set PUBLIC_URL to the address buyers use \(with compose\.yaml: in \.env\.production\)/,
    );
  });
  it("a public address, none, or dev mode: no warning", () => {
    expect(warned({ ...PROD_ENV, PUBLIC_URL: "https://agent.example.com" })).toBeUndefined();
    expect(warned({ ...PROD_ENV, PUBLIC_URL: "https://localhost.example.com" })).toBeUndefined();
    expect(warned(PROD_ENV)).toBeUndefined();
    expect(
      warned({ SERVICE_DEV_MODE: "true", PUBLIC_URL: "http://localhost:3000" }),
    ).toBeUndefined();
  });
});

describe("CORS_ORIGIN", () => {
  it.each([["*"], ["https://app.example.com"], ["http://localhost:5173"]])("%s is fine", (v) => {
    expect(resolveConfig({ env: { ...PROD_ENV, CORS_ORIGIN: v } }).corsOrigin).toBe(v);
  });
  it.each([
    ["app.example.com"],
    ["https://app.example.com/path"],
    ["*.example.com"],
    ["https://app.example.com:99999"],
  ])("%s is refused", (v) => {
    expect(problems({ env: { ...PROD_ENV, CORS_ORIGIN: v } })[0]).toMatch(
      /^CORS_ORIGIN is .*: set it to "\*" \(any site\) or one origin/,
    );
  });
});

describe("several networks (X402_NETWORKS)", () => {
  const BASE = { PAY_TO, X402_FACILITATOR_URL: FACILITATOR };

  it("lists networks in preference order, each with its own token settings over the global ones", () => {
    const config = resolveConfig({
      env: {
        ...BASE,
        X402_NETWORKS: "base-sepolia,eip155:80002",
        X402_ASSET_EIP155_80002: "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582",
        X402_ASSET_NAME: "USDC",
        X402_ASSET_VERSION_EIP155_80002: "2",
        X402_RPC_URL_BASE_SEPOLIA: "https://sepolia.base.org",
      },
    });
    if (config.devMode) throw new Error("production expected");
    expect(config.payment.networks.map((n) => [n.written, n.network.caip2, n.rpcUrl])).toEqual([
      ["base-sepolia", "eip155:84532", "https://sepolia.base.org"],
      ["eip155:80002", "eip155:80002", undefined],
    ]);
    expect(config.payment.networks[1]!.network).toMatchObject({
      chainId: 80002,
      asset: "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582",
      assetName: "USDC",
      assetVersion: "2",
    });
    // The global X402_ASSET_NAME applies to base-sepolia too (it overrides the built-in USDC name).
    expect(config.payment.networks[0]!.network).toMatchObject({ assetName: "USDC" });
    expect(config.payment.network?.caip2).toBe("eip155:84532");
  });

  it("refuses X402_NETWORK and X402_NETWORKS together, empty entries, repeats, unknown names and Solana without its payee", () => {
    expect(
      problems({ env: { ...BASE, X402_NETWORK: "base", X402_NETWORKS: "base,polygon" } }),
    ).toEqual([expect.stringMatching(/^X402_NETWORK and X402_NETWORKS are both set: keep one/)]);
    expect(problems({ env: { ...BASE, X402_NETWORKS: "base,,polygon" } })).toEqual([
      expect.stringMatching(
        /^X402_NETWORKS is "base,,polygon": list networks separated by single commas/,
      ),
    ]);
    expect(problems({ env: { ...BASE, X402_NETWORKS: "base,eip155:8453" } })).toEqual([
      expect.stringMatching(/^X402_NETWORKS lists eip155:8453 twice \("base" and "eip155:8453"\)/),
    ]);
    expect(problems({ env: { ...BASE, X402_NETWORKS: "base,mainnet" } })).toEqual([
      expect.stringMatching(/^X402_NETWORKS lists "mainnet": use "base", "base-sepolia"/),
    ]);
    expect(problems({ env: { ...BASE, X402_NETWORKS: "base,solana" } })).toEqual([
      expect.stringMatching(/^PAY_TO_SOLANA is not set: set it to the Solana address/),
    ]);
  });

  it("a custom chain among several names its own settings when they are missing", () => {
    expect(problems({ env: { ...BASE, X402_NETWORKS: "base,eip155:80002" } })).toEqual([
      expect.stringMatching(
        /^X402_ASSET_EIP155_80002 is not set: network eip155:80002 has no built-in USDC/,
      ),
      expect.stringMatching(/^X402_ASSET_NAME_EIP155_80002 is not set/),
      expect.stringMatching(/^X402_ASSET_VERSION_EIP155_80002 is not set/),
    ]);
  });

  it("direct settlement needs every network's RPC, and uses each network's own", () => {
    const env = {
      PAY_TO,
      X402_NETWORKS: "base-sepolia,arbitrum-sepolia",
      X402_SETTLER_KEY: SETTLER,
    };
    expect(problems({ env: { ...env, X402_RPC_URL_BASE_SEPOLIA: "http://127.0.0.1:1" } })).toEqual([
      expect.stringMatching(
        /^X402_SETTLER_KEY is set but neither X402_RPC_URL_ARBITRUM_SEPOLIA nor X402_RPC_URL is set: direct settlement sends its transactions on arbitrum-sepolia/,
      ),
    ]);
    const config = resolveConfig({
      env: {
        ...env,
        X402_RPC_URL: "http://127.0.0.1:1",
        X402_RPC_URL_ARBITRUM_SEPOLIA: "http://127.0.0.1:2",
      },
    });
    if (config.devMode) throw new Error("production expected");
    expect(config.payment.networks.map((n) => n.settlement)).toEqual([
      { kind: "direct", rpcUrl: "http://127.0.0.1:1", settlerKey: SETTLER },
      { kind: "direct", rpcUrl: "http://127.0.0.1:2", settlerKey: SETTLER },
    ]);
  });
});
