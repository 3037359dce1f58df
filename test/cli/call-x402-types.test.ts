// create-agent types the x402 client (src/caller/payment.ts) and the MCP client (mcp-sdk.ts) it loads on
// demand instead of importing their types, so the light install builds without them. This checks the real packages still fit those shapes:
// at compile time (npm test type-checks this file) and at run time (the functions call() uses exist).
import * as evm from "@x402/evm/exact/client";
import * as fetchModule from "@x402/fetch";
import * as accounts from "viem/accounts";
import { describe, expect, it } from "vitest";
import { loadX402, type X402Client, type X402Signer } from "../../src/caller/payment.js";
import { loadSolana, type SolanaModules } from "../../src/caller/solana-payment.js";
import { solanaReader } from "../../src/caller/solana-payer.js";
import { loadMcpSdk, type McpSdk } from "../../src/caller/mcp-sdk.js";
import { expectFunctions } from "./helpers.js";

/** An importer for the loaders under test, as if no package under `prefix` were installed. */
const missingUnder = (prefix: string) => (specifier: string) =>
  specifier.startsWith(prefix)
    ? Promise.reject(Object.assign(new Error("nope"), { code: "ERR_MODULE_NOT_FOUND" }))
    : import(specifier);

describe("the x402 client shapes create-agent relies on", () => {
  it("are what @x402/fetch, @x402/evm and viem export", async () => {
    // Compile time: what call() does with the real objects type-checks against the real declarations.
    const client: X402Client = new fetchModule.x402Client();
    const signer: X402Signer = accounts.privateKeyToAccount(accounts.generatePrivateKey());
    evm.registerExactEvmScheme(new fetchModule.x402Client(), {
      signer: accounts.privateKeyToAccount(accounts.generatePrivateKey()),
    });
    expect(signer.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(typeof client.onBeforePaymentCreation).toBe("function");
    const real = { fetch: fetchModule, evm, accounts };
    const loaded = await loadX402();
    for (const modules of [real, loaded])
      expectFunctions(modules, [
        "fetch.x402Client",
        "fetch.wrapFetchWithPayment",
        "evm.registerExactEvmScheme",
        "accounts.privateKeyToAccount",
      ]);
    expectFunctions(new loaded.fetch.x402Client(), [
      "setSpendControls",
      "onBeforePaymentCreation",
      "onAfterPaymentCreation",
    ]);
  });
});

describe("the Solana payer shapes create-agent relies on", () => {
  it("are what @x402/svm, @solana/kit and @solana-program/token export; a missing one names the install command", async () => {
    // Compile time: the real modules fit the hand-written shapes of solana-payer.ts and solana-payment.ts.
    const kit = await import("@solana/kit");
    const token = await import("@solana-program/token");
    const svm = await import("@x402/svm/exact/client");
    const svmV1 = await import("@x402/svm/exact/v1/client");
    const typed: Omit<SolanaModules, "reader" | "fetch"> = { kit, token, svm, svmV1 };
    expect(typeof solanaReader(typed.kit, typed.token).read).toBe("function");
    const loaded = await loadSolana();
    expect(typeof loaded.svm.ExactSvmScheme).toBe("function");
    expect(typeof loaded.svmV1.ExactSvmSchemeV1).toBe("function");
    const client = new loaded.fetch.x402Client();
    for (const method of ["register", "registerV1", "registerPolicy", "setSpendControls"])
      expect(typeof (client as unknown as Record<string, unknown>)[method]).toBe("function");

    const missing = missingUnder("@solana/");
    await expect(loadSolana(missing)).rejects.toThrow(
      "npm install --no-save @x402/fetch@2.27.0 @solana-program/token@0.9.0 @solana/kit@5.5.1 @x402/svm@2.27.0",
    );
    await expect(loadSolana(missing)).rejects.toThrow("is not installed; nothing was signed");
  });
});

describe("the MCP client shapes `call --mcp` relies on", () => {
  it("are what @modelcontextprotocol/sdk exports; a missing one names the install command, nothing sent", async () => {
    // Compile time: the real classes fit the hand-written shapes of mcp-sdk.ts.
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StreamableHTTPClientTransport } =
      await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const typed: McpSdk = { Client, StreamableHTTPClientTransport };
    const loaded = await loadMcpSdk();
    for (const sdk of [typed, loaded]) {
      const client = new sdk.Client({ name: "shape", version: "1" });
      for (const method of ["connect", "callTool", "close"])
        expect(typeof (client as unknown as Record<string, unknown>)[method]).toBe("function");
      expect(typeof sdk.StreamableHTTPClientTransport).toBe("function");
    }
    const missing = missingUnder("@modelcontextprotocol/");
    await expect(loadMcpSdk(missing)).rejects.toThrow(
      "npm install --no-save @modelcontextprotocol/sdk@1.32.2",
    );
    await expect(loadMcpSdk(missing)).rejects.toThrow("is not installed; nothing was sent");
  });
});
