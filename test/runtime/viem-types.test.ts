// The runtime loads viem through templates/runtime/payments/evm/viem.ts, typed by its own interfaces instead
// of viem's declarations (those made every generated project's type-check several times slower). This
// checks that the real viem (the version projects pin) still does what the runtime does with it:
//   - type-checking the runtime with viem.ts's loaders importing "viem" itself, so onchain.ts,
//     direct-settlement.ts and gate.ts are checked against viem's own declarations;
//   - at run time, the loaders load this viem, with everything the runtime takes from it.
// The chain tests (test/chain/) run the same code against anvil.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import * as viem from "viem";
import * as accounts from "viem/accounts";
import { afterAll, describe, expect, it } from "vitest";
import {
  loadViem,
  loadViemAccounts,
  type Viem,
  type ViemAccounts,
} from "../../templates/runtime/payments/evm/viem.js";

const root = new URL("../..", import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), "runtime-viem-types-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the viem the runtime loads without its declarations", () => {
  it("type-checks the runtime's use of it against viem's own declarations", async () => {
    cpSync(join(root, "templates/runtime"), join(work, "src/runtime"), { recursive: true });
    const file = join(work, "src/runtime/payments/evm/viem.ts");
    const source = readFileSync(file, "utf8");
    // viem.ts ends with its loaders; here they import viem by name, so tsc reads its declarations.
    const loaders = source.indexOf("const load = ");
    expect(loaders).toBeGreaterThan(0);
    expect(source.slice(loaders)).toContain('load("viem")');
    expect(source.slice(loaders)).toContain('load("viem/accounts")');
    writeFileSync(
      file,
      `${source.slice(0, loaders)}export const loadViem = () => import("viem");\n` +
        'export const loadViemAccounts = () => import("viem/accounts");\n',
    );
    writeFileSync(join(work, "package.json"), '{ "type": "module" }\n');
    symlinkSync(join(root, "node_modules"), join(work, "node_modules"), "dir");
    writeFileSync(
      join(work, "tsconfig.json"),
      JSON.stringify({ extends: join(root, "tsconfig.json"), include: ["src"] }),
    );
    const tsc = join(root, "node_modules/typescript/bin/tsc");
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [tsc, "-p", join(work, "tsconfig.json"), "--noEmit", "--listFiles"],
      { maxBuffer: 64 * 1024 * 1024 },
    ).catch((err: { stdout?: string }) => {
      const errors = (err.stdout ?? String(err)).split("\n").filter((line) => /error TS/.test(line));
      throw new Error(`the runtime does not type-check against viem:\n${errors.join("\n")}`);
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
