/**
 * The vendored create-agent in package-lock.json. A create-agent rebuilt at the same version (a clone that
 * pulled new commits) vendors a tarball of the same name: npm, finding the spec unchanged and the lock's
 * integrity matching what it installed, says "up to date" and keeps the old CLI (npm ci even installs the
 * old bytes from its cache). So the lock entry of the tarball upgrade writes gets that tarball's integrity.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { PackageManager } from "../generate/package-manager.js";
import { isObject } from "../json-object.js";
import type { FileChange } from "./plan.js";

/** npm's integrity (SRI, sha512) of some bytes. */
export function integrityOf(bytes: Uint8Array): string {
  return `sha512-${createHash("sha512").update(bytes).digest("base64")}`;
}

/**
 * The package-lock.json change that gives every entry resolved to the vendored tarball `changes` write its
 * new integrity; undefined when there is no npm lockfile, no such entry, or nothing to change.
 */
export function lockfileChange(
  lockText: string | undefined,
  changes: readonly FileChange[],
): FileChange | undefined {
  const vendored = changes.find(
    (c) => c.action === "vendor" && c.path.endsWith(".tgz") && c.after instanceof Uint8Array,
  );
  if (lockText === undefined || !vendored) return undefined;
  let lock: unknown;
  try {
    lock = JSON.parse(lockText);
  } catch {
    return undefined; // a broken lockfile is npm's to report
  }
  const packages = isObject(lock) && isObject(lock.packages) ? lock.packages : {};
  const integrity = integrityOf(vendored.after as Uint8Array);
  let changed = false;
  for (const entry of Object.values(packages)) {
    if (!isObject(entry) || entry.resolved !== `file:${vendored.path}`) continue;
    if (entry.integrity === integrity) continue;
    entry.integrity = integrity;
    changed = true;
  }
  if (!changed) return undefined;
  const indent = /^\{\r?\n([ \t]+)"/.exec(lockText)?.[1] ?? "  ";
  const after = JSON.stringify(lock, null, indent) + (lockText.endsWith("\n") ? "\n" : "");
  return { path: "package-lock.json", action: "vendor", before: Buffer.from(lockText), after };
}

/** The package manager the project uses: its lockfile, else package.json's packageManager, else npm. */
export function projectPackageManager(root: string, pkg: unknown): PackageManager {
  const lockfiles: Array<[string, PackageManager]> = [
    ["pnpm-lock.yaml", "pnpm"],
    ["yarn.lock", "yarn"],
    ["bun.lock", "bun"],
    ["bun.lockb", "bun"],
    ["package-lock.json", "npm"],
  ];
  for (const [file, pm] of lockfiles) if (existsSync(join(root, file))) return pm;
  const declared =
    typeof pkg === "object" && pkg !== null && "packageManager" in pkg
      ? String((pkg as { packageManager: unknown }).packageManager).split("@")[0]
      : undefined;
  return declared === "pnpm" || declared === "yarn" || declared === "bun" ? declared : "npm";
}
