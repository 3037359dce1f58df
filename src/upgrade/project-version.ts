import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isObject } from "../json-object.js";

/**
 * Which create-agent made a project, as the project records it: package.json's `createAgent.version`
 * (written since 0.2.0), else the version in the vendored tarball's name that its `create-agent`
 * devDependency points at (`file:vendor/create-agent-0.1.0.tgz`, which every project has had).
 * Undefined when neither is there (not a project made by create-agent, or a hand-edited one).
 */
export function projectToolVersion(root: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(join(root, "package.json"), "utf8");
  } catch {
    return undefined; // no package.json: not a project create-agent made
  }
  return toolVersionOf(parsePackageJson(text));
}

/** package.json parsed; when it is not JSON, an Error naming the line and column (and a conflict left in it). */
export function parsePackageJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const at = /position (\d+)/.exec(message);
    const before = at ? text.slice(0, Number(at[1])).split("\n") : undefined;
    const where = before ? ` at line ${before.length}, column ${before.at(-1)!.length + 1}` : "";
    const markers = /^<<<<<<< /m.test(text)
      ? " (it holds conflict markers <<<<<<<: resolve them)"
      : "";
    throw new Error(`package.json is not valid JSON${where}${markers}: ${message}`);
  }
}

/** The create-agent version a parsed package.json records (see projectToolVersion). */
export function toolVersionOf(pkg: unknown): string | undefined {
  if (!isObject(pkg)) return undefined;
  const recorded = isObject(pkg.createAgent) ? pkg.createAgent.version : undefined;
  if (typeof recorded === "string" && parseVersion(recorded)) return recorded;
  const spec = isObject(pkg.devDependencies) ? pkg.devDependencies["create-agent"] : undefined;
  const match = typeof spec === "string" ? /create-agent-(\d+\.\d+\.\d+)\.tgz$/.exec(spec) : null;
  return match?.[1];
}

/** The vendored tarball a package.json's `create-agent` devDependency points at (project-relative). */
export function vendoredToolPath(pkg: unknown): string | undefined {
  if (!isObject(pkg) || !isObject(pkg.devDependencies)) return undefined;
  const spec = pkg.devDependencies["create-agent"];
  return typeof spec === "string" && spec.startsWith("file:") ? spec.slice(5) : undefined;
}

/** [major, minor, patch] of "x.y.z" (a pre-release or build suffix is ignored), undefined otherwise. */
export function parseVersion(version: string): [number, number, number] | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(version);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/** Negative when a < b, 0 when equal, positive when a > b (by major, minor, patch). */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [parseVersion(a), parseVersion(b)];
  if (!x || !y) return 0;
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}
