// upgrade and package-lock.json: a create-agent rebuilt at the same version vendors a tarball of the same
// name, which npm would not reinstall (the lock's integrity still matches what it installed); the lock's
// entry of that tarball gets the new bytes' integrity, as npm itself computes it.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { integrityOf, lockfileChange } from "../../src/upgrade/lockfile.js";
import type { FileChange } from "../../src/upgrade/plan.js";

const TARBALL = "vendor/create-agent-0.2.0.tgz";
const lockWith = (integrity: string) =>
  JSON.stringify(
    {
      name: "shop",
      lockfileVersion: 3,
      packages: {
        "": { devDependencies: { "create-agent": `file:${TARBALL}` } },
        "node_modules/create-agent": { version: "0.2.0", resolved: `file:${TARBALL}`, integrity },
        "node_modules/ajv": { version: "8.20.0", integrity: "sha512-other" },
      },
    },
    null,
    2,
  ) + "\n";

describe("lockfileChange", () => {
  it("gives the vendored tarball's lock entry the integrity npm computes for the new bytes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "lockfile-"));
    try {
      await writeFile(join(dir, "package.json"), '{"name":"t","version":"1.0.0"}\n');
      const packed = await execa("npm", ["pack", "--json"], { cwd: dir });
      const { filename, integrity } = (
        JSON.parse(packed.stdout) as Array<{ filename: string; integrity: string }>
      )[0]!;
      const bytes = new Uint8Array(await readFile(join(dir, filename)));
      expect(integrityOf(bytes)).toBe(integrity); // npm's own figure
      const vendored: FileChange = { path: TARBALL, action: "vendor", after: bytes };
      const change = lockfileChange(lockWith("sha512-old"), [vendored]);
      expect(change?.path).toBe("package-lock.json");
      expect(change?.after).toBe(lockWith(integrity)); // that entry only, layout kept
      expect(lockfileChange(lockWith(integrity), [vendored])).toBeUndefined();
      expect(lockfileChange(undefined, [vendored])).toBeUndefined();
      expect(lockfileChange(lockWith("sha512-old"), [])).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
