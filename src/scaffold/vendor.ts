import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLIENT_SHARED_FILES } from "../caller/guard-file.js";
import type { TarEntry } from "./tarball.js";

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
 * name `create-agent` belongs to someone else. Computed once per process, and kept on disk between
 * processes (see packPackage).
 */
export function packSelf(): Promise<VendoredSelf> {
  // Two levels up from src/scaffold/ (under vitest) or dist/scaffold/ (built) is the package root.
  cached ??= packPackage(fileURLToPath(new URL("../../", import.meta.url)));
  return cached;
}

/** Forgets the tarball cached in this process (for tests that check packing is deterministic). */
export function resetPackSelfCache(): void {
  cached = undefined;
}

/** Where packPackage keeps tarballs between runs: the usual place for tools' caches in a package. */
export function packCacheDir(root: string): string {
  return join(root, "node_modules", ".cache", "create-agent");
}

/** Tarballs kept in the cache folder (other builds of the tool, e.g. while developing it). */
const CACHE_ENTRIES_KEPT = 4;
/** Changes whenever what this file puts in the tarball, or how, changes (a cache entry is then stale). */
const PACK_FORMAT = "1";

/**
 * The package at `root` as an npm tarball. Packing reads and gzips every shipped file (most of what
 * `packSelf` costs), so the bytes are kept in `packCacheDir(root)` under a key made of each file's path,
 * size, inode, mtime and ctime (what git and make trust to say a file is unchanged: any rewrite moves
 * ctime) and zlib's version (the gzip bytes depend on it). A later run with the same key reads the bytes
 * back: the same bytes a fresh packing gives. Without a writable cache folder, it packs every time.
 * A hit loads neither node:zlib nor node:crypto (the key is compared whole, not hashed).
 */
export async function packPackage(
  root: string,
  options: { cache?: boolean } = {},
): Promise<VendoredSelf> {
  if (!existsSync(join(root, "dist", "cli", "main.js"))) {
    throw new Error(
      `create-agent cannot vendor itself: ${join(root, "dist")} is missing or incomplete; run \`npm run build\` first`,
    );
  }
  const sources = shippedFiles(root);
  const cacheDir = packCacheDir(root);
  // The key is taken before any file is read and checked again after packing, so a file rewritten
  // meanwhile (a build running at the same time) never leaves its old bytes under its new key.
  const key = options.cache === false ? undefined : stamp(root, sources);
  const pkgText = readFileSync(join(root, "package.json"), "utf8");
  const version = String((JSON.parse(pkgText) as { version: unknown }).version);
  const path = `vendor/create-agent-${version}.tgz`;
  if (key === undefined) return { path, contents: await pack(root, pkgText, sources), version };
  const entry = join(cacheDir, `self-${nameHash(key)}.tgz`);
  const hit = readCacheEntry(entry, key);
  if (hit) return { path, contents: hit, version };
  const contents = await pack(root, pkgText, sources);
  if (stamp(root, sources) === key) saveToCache(cacheDir, entry, key, contents);
  return { path, contents, version };
}

/** A shipped file: its POSIX path in the package, and its mode in the archive. */
interface Source {
  path: string;
  mode?: number;
}

/**
 * What an installed copy gets, in archive order: package.json, the bin, dist/ (no source maps), templates,
 * schema, the first-use lockfiles (locks/), and the payer's guard sources (copied into every generated client).
 */
function shippedFiles(root: string): Source[] {
  const files: Source[] = [
    { path: "package.json" },
    { path: "bin/create-agent.js", mode: 0o755 },
    ...CLIENT_SHARED_FILES.map((path) => ({ path })),
  ];
  for (const dir of ["dist", "templates", "schema", "locks"]) {
    for (const path of listFiles(root, dir)) {
      if (dir === "dist" && !path.endsWith(".js")) continue; // no source maps (they point at src/, not shipped)
      files.push({ path });
    }
  }
  // Code-unit order, not localeCompare: the same bytes whatever the machine's locale.
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The cache key of these files as they are on disk now; undefined if one cannot be read. */
function stamp(root: string, sources: Source[]): string | undefined {
  const lines = [`${PACK_FORMAT}\0${process.versions.zlib}\0${root}`];
  try {
    for (const { path } of sources) {
      const s = statSync(join(root, path), { bigint: true });
      lines.push(`${path}\0${s.size}\0${s.ino}\0${s.mtimeNs}\0${s.ctimeNs}`);
    }
  } catch {
    return undefined;
  }
  return lines.join("\n");
}

/** 16 hex digits naming a key's cache entry (cyrb53's mixing, 64 bits out): only a name, the entry holds the key. */
function nameHash(key: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const hex = (n: number) => (n >>> 0).toString(16).padStart(8, "0");
  return hex(h2) + hex(h1);
}

/**
 * A cache entry is the key's length (4 bytes, big-endian), the key (UTF-8), then the tarball. The tarball
 * when the stored key is this one, else undefined (no entry, another key under the same name, a short file).
 */
function readCacheEntry(entry: string, key: string): Buffer | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(entry);
  } catch {
    return undefined;
  }
  if (bytes.length < 4) return undefined;
  const end = 4 + bytes.readUInt32BE(0);
  if (end > bytes.length || bytes.toString("utf8", 4, end) !== key) return undefined;
  return bytes.subarray(end);
}

async function pack(root: string, pkgText: string, sources: Source[]): Promise<Buffer> {
  const { createTarGz } = await import("./tarball.js"); // node:zlib, only when packing
  const pkg = JSON.parse(pkgText) as Record<string, unknown>;
  const trimmed: Record<string, unknown> = {};
  for (const field of KEPT_FIELDS) if (pkg[field] !== undefined) trimmed[field] = pkg[field];
  trimmed.dependencies = Object.fromEntries(
    Object.entries(pkg.dependencies as Record<string, string>).filter(([n]) => !BUILD_ONLY.has(n)),
  );
  const entries: TarEntry[] = sources.map(({ path, mode }) => ({
    path: `package/${path}`,
    contents:
      path === "package.json"
        ? Buffer.from(JSON.stringify(trimmed, null, 2) + "\n")
        : readFileSync(join(root, path)),
    ...(mode === undefined ? {} : { mode }),
  }));
  return createTarGz(entries);
}

/**
 * Writes a cache entry through a temp file and a rename (a reader never sees half of one), then drops all
 * but the newest few. Best effort: a read-only install simply packs every time.
 */
function saveToCache(cacheDir: string, entry: string, key: string, contents: Buffer): void {
  const temp = `${entry}.${process.pid}-${Math.random().toString(36).slice(2, 10)}.tmp`;
  try {
    mkdirSync(cacheDir, { recursive: true });
    const header = Buffer.alloc(4);
    const keyBytes = Buffer.from(key);
    header.writeUInt32BE(keyBytes.length, 0);
    writeFileSync(temp, Buffer.concat([header, keyBytes, contents]));
    renameSync(temp, entry);
    const old = readdirSync(cacheDir)
      .filter((name) => name.startsWith("self-") && name.endsWith(".tgz"))
      .map((name) => ({ name, mtime: statSync(join(cacheDir, name)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime)
      .slice(CACHE_ENTRIES_KEPT);
    for (const { name } of old) rmSync(join(cacheDir, name), { force: true });
  } catch {
    try {
      rmSync(temp, { force: true });
    } catch {
      // The folder itself could not be made: there is no temp file to remove.
    }
  }
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
