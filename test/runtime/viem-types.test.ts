// The runtime loads viem through templates/runtime/payments/evm/viem.ts, typed by its own interfaces instead
// of viem's declarations (those made every generated project's type-check several times slower). This
// checks that the real viem (the version projects pin) still does what the runtime does with it:
//   - type-checking the runtime with viem.ts's loaders importing "viem" itself, so onchain.ts,
//     direct-settlement.ts and gate.ts are checked against viem's own declarations;
//   - at run time, the loaders load this viem, with everything the runtime takes from it.
// The chain tests (test/chain/) run the same code against anvil.
import * as viem from "viem";
import * as accounts from "viem/accounts";
import { describe, expect, it } from "vitest";
import {
  loadViem,
  loadViemAccounts,
  type Viem,
  type ViemAccounts,
} from "../../templates/runtime/payments/evm/onchain/viem.js";
import { typecheckAgainstPackages } from "./real-declarations.js";

describe("the viem the runtime loads without its declarations", () => {
  it("type-checks the runtime's use of it against viem's own declarations", async () => {
    // onchain/checks.ts, direct-settlement.ts and module.ts are checked against viem's own declarations.
    const stdout = await typecheckAgainstPackages("payments/evm/onchain/viem.ts", {
      loadViem: "viem",
      loadViemAccounts: "viem/accounts",
    });
    // It really was viem's declarations that the runtime was checked against.
    expect(stdout).toMatch(/node_modules\/viem\/_types\/index\.d\.ts/);
    expect(stdout).toMatch(/node_modules\/viem\/_types\/accounts\/index\.d\.ts/);
  }, 180_000);

  it("loads this viem, with everything the runtime takes from it", async () => {
    const [loaded, loadedAccounts] = await Promise.all([loadViem(), loadViemAccounts()]);
    expect(loaded.createPublicClient).toBe(viem.createPublicClient);
    expect(loadedAccounts.privateKeyToAccount).toBe(accounts.privateKeyToAccount);
    const taken: Array<keyof Viem> = [
      "BaseError",
      "ContractFunctionRevertedError",
      "RpcRequestError",
      "HttpRequestError",
      "TimeoutError",
      "NonceTooLowError",
      "createPublicClient",
      "createWalletClient",
      "defineChain",
      "http",
      "encodeFunctionData",
    ];
    for (const name of taken) expect(typeof loaded[name], name).toBe("function");
    const takenAccounts: Array<keyof ViemAccounts> = ["privateKeyToAccount", "privateKeyToAddress"];
    for (const name of takenAccounts) expect(typeof loadedAccounts[name], name).toBe("function");
  });
});
