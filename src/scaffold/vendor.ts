import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTarGz, type TarEntry } from "./tarball.js";

/** This package's own tarball, as a file a new project keeps in `vendor/`. */
export interface VendoredSelf {
  /** POSIX path relative to the project root: `vendor/create-agent-<version>.tgz`. */
  path: string;
  contents: Buffer;
  version: string;
}

// package.json fields an installed copy needs. Never `scripts` (`prepare` would run tsc on install,
// and tsc is only a devDependency here) and never `devDependencies` (npm would not install them anyway).
const KEPT_FIELDS = [
  "name",
  "version",
  "description",
  "type",
  "bin",
  "engines",
  "license",
  "dependencies",
] as const;

// Dependencies that only build dist/ from src/ (the `prepare` script of a clone): an installed copy
// ships dist/ already built, so a project never installs them on its behalf.
const BUILD_ONLY = new Set(["typescript", "@types/node"]);

let cached: Promise<VendoredSelf> | undefined;

/**
 * Packs this very package (the running create-agent) the way npm would install it, so a scaffolded
 * project can depend on `file:vendor/create-agent-<version>.tgz` instead of the registry, where the
 * name `create-agent` belongs to someone else. Computed once per process.
 */
export function packSelf(): Promise<VendoredSelf> {
  cached ??= Promise.resolve().then(pack);
  return cached;
}

/** Forgets the cached tarball (for tests that check packing is deterministic). */
export function resetPackSelfCache(): void {
  cached = undefined;
}

function pack(): VendoredSelf {
  // Two levels up from src/scaffold/ (under vitest) or dist/scaffold/ (built) is the package root.
  const root = fileURLToPath(new URL("../../", import.meta.url));
  if (!existsSync(join(root, "dist", "cli", "main.js"))) {
    throw new Error(
      `create-agent cannot vendor itself: ${join(root, "dist")} is missing or incomplete; run \`npm run build\` first`,
    );
  }

  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<
    string,
    unknown
  >;
  const trimmed: Record<string, unknown> = {};
  for (const field of KEPT_FIELDS) if (pkg[field] !== undefined) trimmed[field] = pkg[field];
  trimmed.dependencies = Object.fromEntries(
    Object.entries(pkg.dependencies as Record<string, string>).filter(([n]) => !BUILD_ONLY.has(n)),
  );
  const version = String(pkg.version);

  const files: TarEntry[] = [
    { path: "package.json", contents: Buffer.from(JSON.stringify(trimmed, null, 2) + "\n") },
    {
      path: "bin/create-agent.js",
      contents: readFileSync(join(root, "bin/create-agent.js")),
      mode: 0o755,
    },
  ];
  for (const dir of ["dist", "templates", "schema"]) {
    for (const path of listFiles(root, dir)) {
      if (dir === "dist" && !path.endsWith(".js")) continue; // no source maps (they point at src/, not shipped)
      files.push({ path, contents: readFileSync(join(root, path)) });
    }
  }

  // Code-unit order, not localeCompare: the same bytes whatever the machine's locale.
  const entries = files
    .map((f) => ({ ...f, path: `package/${f.path}` }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    path: `vendor/create-agent-${version}.tgz`,
    contents: createTarGz(entries),
    version,
  };
}

/** Regular files under root/dir, as POSIX paths relative to root. Symlinks and the like are skipped. */
function listFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...listFiles(root, path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}
