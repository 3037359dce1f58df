// `npm test` on a clone set up for scaffolding only (`npm ci --omit=dev`, the README's first command):
// the test-only packages (anvil, Circle's contracts, the x402 clients, vitest...) are installed here,
// once, before the tests run. Already installed: does nothing.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const wanted = { ...pkg.dependencies, ...pkg.devDependencies };
const missing = Object.entries(wanted).filter(([name, version]) => {
  const manifest = join(root, "node_modules", name, "package.json");
  return !existsSync(manifest) || JSON.parse(readFileSync(manifest, "utf8")).version !== version;
});
if (missing.length > 0) {
  const names = missing.map(([name]) => name);
  const shown = names.slice(0, 5).join(", ") + (names.length > 5 ? `, and ${names.length - 5} more` : "");
  console.log(`Installing what the tests need (${shown}): npm install --include=dev`);
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const result = spawnSync(npm, ["install", "--include=dev", "--no-audit", "--no-fund"], {
    cwd: root,
    stdio: "inherit",
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
