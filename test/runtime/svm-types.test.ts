// The runtime loads @x402/svm and @solana/kit through templates/runtime/payments/svm/solana.ts, typed by
// its own interfaces instead of their declarations (a project's type-check must not read Solana's). This
// checks that the real packages (the versions projects pin) still do what the runtime does with them:
//   - type-checking the runtime with solana.ts's loaders importing the packages by name, so svm/scheme.ts
//     is checked against their own declarations;
//   - at run time, the loaders load these packages, with everything the runtime takes from them.
// test/chain/solana.test.ts runs the same code against a real Solana runtime (LiteSVM).
import * as kit from "@solana/kit";
import * as svm from "@x402/svm";
import * as svmFacilitator from "@x402/svm/exact/facilitator";
import * as svmFacilitatorV1 from "@x402/svm/exact/v1/facilitator";
import { describe, expect, it } from "vitest";
import {
  loadSolanaKit,
  loadX402Svm,
  loadX402SvmFacilitator,
  loadX402SvmFacilitatorV1,
  type SolanaKit,
  type X402Svm,
} from "../../templates/runtime/payments/svm/solana.js";
import { typecheckAgainstPackages } from "./real-declarations.js";

describe("the Solana packages the runtime loads without their declarations", () => {
  it("type-checks the runtime's use of them against their own declarations", async () => {
    const stdout = await typecheckAgainstPackages("payments/svm/solana.ts", {
      loadX402Svm: "@x402/svm",
      loadX402SvmFacilitator: "@x402/svm/exact/facilitator",
      loadX402SvmFacilitatorV1: "@x402/svm/exact/v1/facilitator",
      loadSolanaKit: "@solana/kit",
    });
    expect(stdout).toMatch(/node_modules\/@x402\/svm\/dist\/esm\/index\.d\.mts/);
    expect(stdout).toMatch(/node_modules\/@solana\/kit\/dist\/types\/index\.d\.ts/);
  }, 180_000);

  it("loads these packages, with everything the runtime takes from them", async () => {
    const [x402, facilitator, facilitatorV1, solana] = await Promise.all([
      loadX402Svm(),
      loadX402SvmFacilitator(),
      loadX402SvmFacilitatorV1(),
      loadSolanaKit(),
    ]);
    expect(x402.toFacilitatorSvmSigner).toBe(svm.toFacilitatorSvmSigner);
    expect(facilitator.ExactSvmScheme).toBe(svmFacilitator.ExactSvmScheme);
    expect(facilitatorV1.ExactSvmSchemeV1).toBe(svmFacilitatorV1.ExactSvmSchemeV1);
    expect(solana.createSolanaRpc).toBe(kit.createSolanaRpc);
    const taken: Array<keyof X402Svm> = ["toFacilitatorSvmSigner"];
    for (const name of taken) expect(typeof x402[name], name).toBe("function");
    const takenKit: Array<keyof SolanaKit> = [
      "createKeyPairSignerFromBytes",
      "createSolanaRpc",
      "devnet",
      "mainnet",
      "getTransactionDecoder",
      "getCompiledTransactionMessageDecoder",
      "getU32Decoder",
      "getU64Decoder",
    ];
    for (const name of takenKit) expect(typeof solana[name], name).toBe("function");
  });
});
