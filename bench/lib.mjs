// What every bench script shares: peers pinned and installed by the bench itself (never part of the tool's
// install), create-agent and its peer measured interleaved in one run, and the ratio line each script ends with:
//   ratio <name> <median> (<min>..<max>)
// where each ratio is create-agent's figure over the peer's from the same pair (times: lower is better;
// throughputs: higher is better; each script says which).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export { manyCapabilities } from "./workload.mjs";

export const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
/** Where peers are installed (gitignored); one folder, so each peer is installed once per machine. */
export const peersDir = join(root, "bench", ".peers");

/**
 * Installs the pinned peers (name -> exact version) into bench/.peers unless already there, and returns a
 * loader for them: `peer.require(name)`, `peer.import(name)`, `peer.path(name, ...subpath)`.
 */
export function ensurePeers(peers) {
  mkdirSync(peersDir, { recursive: true });
  const manifest = join(peersDir, "package.json");
  if (!existsSync(manifest))
    writeFileSync(manifest, `${JSON.stringify({ name: "bench-peers", private: true }, null, 2)}\n`);
  const missing = Object.entries(peers).filter(([name, version]) => {
    const installed = join(peersDir, "node_modules", name, "package.json");
    return !existsSync(installed) || JSON.parse(readFileSync(installed, "utf8")).version !== version;
  });
  if (missing.length > 0) {
    const specs = missing.map(([name, version]) => `${name}@${version}`);
    console.error(`bench: installing peers ${specs.join(" ")} into bench/.peers`);
    execFileSync(
      "npm",
      ["install", "--no-audit", "--no-fund", "--save-exact", "--ignore-scripts", ...specs],
      { cwd: peersDir, stdio: ["ignore", "ignore", "inherit"] },
    );
  }
  const require = createRequire(manifest);
  return {
    require: (name) => require(name),
    resolve: (name) => require.resolve(name),
    import: (name) => import(pathToFileURL(require.resolve(name)).href),
    path: (...parts) => join(peersDir, "node_modules", ...parts),
  };
}

export const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * Runs `ours` and `peer` in interleaved pairs (the order alternates each round, so drift and warm caches
 * favour neither), after `warmup` unmeasured rounds. Each function returns its figure (ms or a rate).
 * Returns both series and the per-pair ratios ours / peer.
 */
export async function pairs({ ours, peer, runs = Number(process.env.RUNS ?? 9), warmup = 1 }) {
  const result = { ours: [], peer: [], ratios: [] };
  for (let i = 0; i < warmup + runs; i++) {
    const order = i % 2 === 0 ? ["ours", "peer"] : ["peer", "ours"];
    const round = {};
    for (const side of order) round[side] = await (side === "ours" ? ours : peer)(i);
    if (i < warmup) continue;
    result.ours.push(round.ours);
    result.peer.push(round.peer);
    result.ratios.push(round.ours / round.peer);
  }
  return result;
}

/** Wall time of an async function in ms. */
export async function timed(fn) {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Prints the two medians, then the ratio line (always the script's last line for that row). */
export function report(name, result, { unit = "ms", ours = "create-agent", peer = "peer" } = {}) {
  const fmt = (x) => (unit === "ms" ? `${x.toFixed(1)} ms` : `${x.toFixed(0)} ${unit}`);
  console.log(`${name}: ${ours} median ${fmt(median(result.ours))}, ${peer} median ${fmt(median(result.peer))}, ${result.ratios.length} pairs`);
  const r = result.ratios;
  console.log(`ratio ${name} ${median(r).toFixed(2)} (${Math.min(...r).toFixed(2)}..${Math.max(...r).toFixed(2)})`);
}
