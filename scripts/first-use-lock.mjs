#!/usr/bin/env node
// Rewrites locks/x402-client.json: the lockfile create-agent installs the official x402 client from on first
// use (src/first-use.ts), so every package of it (viem's ox, zod, @noble/*, ...), not only the ones
// versions.ts pins, is the version and the bytes this clone was tested with. Run it after changing a
// pinned version of that set (npm run build first: it reads the set from dist/); a test fails until then.
// Entries keep npm's integrity and no `resolved` URL, so `npm ci` fetches them from the user's registry.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { X402_FIRST_USE } = await import(join(root, "dist", "caller", "payment.js"));
const work = mkdtempSync(join(tmpdir(), "first-use-lock-"));
try {
  const dependencies = Object.fromEntries(
    X402_FIRST_USE.specs.map((spec) => {
      const at = spec.lastIndexOf("@");
      return [spec.slice(0, at), spec.slice(at + 1)];
    }),
  );
  const pkg = { name: "create-agent-x402", private: true, dependencies };
  writeFileSync(join(work, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  const npm = spawnSync(
    "npm",
    ["install", "--package-lock-only", "--no-audit", "--no-fund", "--ignore-scripts"],
    { cwd: work, stdio: "inherit" },
  );
  if (npm.status !== 0) process.exit(npm.status ?? 1);
  const lock = JSON.parse(readFileSync(join(work, "package-lock.json"), "utf8"));
  for (const entry of Object.values(lock.packages)) delete entry.resolved;
  writeFileSync(X402_FIRST_USE.lockfile, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`${X402_FIRST_USE.lockfile}: ${Object.keys(lock.packages).length - 1} packages`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
