// create-agent types the x402 client it loads on demand (src/caller/payment.ts) instead of importing its
// types, so the light install builds without it. This checks the real packages still fit those shapes:
// at compile time (npm test type-checks this file) and at run time (the functions call() uses exist).
import * as evm from "@x402/evm/exact/client";
import * as fetchModule from "@x402/fetch";
import * as accounts from "viem/accounts";
import { describe, expect, it } from "vitest";
import { loadX402, type X402Client, type X402Signer } from "../../src/caller/payment.js";

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
    for (const modules of [real, loaded]) {
      expect(typeof modules.fetch.x402Client).toBe("function");
      expect(typeof modules.fetch.wrapFetchWithPayment).toBe("function");
      expect(typeof modules.evm.registerExactEvmScheme).toBe("function");
      expect(typeof modules.accounts.privateKeyToAccount).toBe("function");
    }
    const made = new loaded.fetch.x402Client();
    for (const method of ["setSpendControls", "onBeforePaymentCreation", "onAfterPaymentCreation"])
      expect(typeof (made as unknown as Record<string, unknown>)[method]).toBe("function");
  });
});
