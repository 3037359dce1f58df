import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { tempDir } from "../cli/helpers.js";
import { createTarGz, readTarGz, TAR_MTIME } from "../../src/scaffold/tarball.js";

// 61 + 1 + 61 + 1 + 8 = 132 characters: needs the ustar prefix field.
const LONG = `${"a".repeat(61)}/${"b".repeat(61)}/long.txt`;
const FILES = [
  { path: "package/README.md", contents: Buffer.from("# hello\n") },
  { path: "package/bin/run.js", contents: Buffer.from("#!/usr/bin/env node\n"), mode: 0o755 },
  { path: "package/empty.txt", contents: Buffer.alloc(0) },
  { path: "package/exact-block.bin", contents: Buffer.alloc(512, 7) },
  { path: "package/ünïcode.txt", contents: Buffer.from("ümlaut\n") },
  { path: LONG, contents: Buffer.from("x".repeat(1000)) },
];

async function extract(archive: Buffer): Promise<string> {
  const dir = await tempDir();
  await writeFile(join(dir, "a.tgz"), archive);
  await execa("tar", ["-xzf", "a.tgz", "-C", dir], { cwd: dir });
  return dir;
}

describe("createTarGz", () => {
  it("extracts with the system tar to exactly the given files", async () => {
    expect(LONG.length).toBeGreaterThan(100);
    const dir = await extract(createTarGz(FILES));
    for (const file of FILES) {
      expect(await readFile(join(dir, file.path))).toEqual(file.contents);
    }
    const { stdout } = await execa("tar", ["-tzf", join(dir, "a.tgz")]);
    expect(stdout.split("\n")).toEqual(FILES.map((f) => f.path));
  });

  it("keeps the executable mode and the fixed mtime", async () => {
    const dir = await extract(createTarGz(FILES));
    const bin = await stat(join(dir, "package/bin/run.js"));
    const readme = await stat(join(dir, "package/README.md"));
    expect(bin.mode & 0o111).not.toBe(0);
    expect(readme.mode & 0o111).toBe(0);
    expect(readme.mtimeMs).toBe(TAR_MTIME * 1000);

    // TZ=UTC so the listing shows 08:15 whatever the machine's zone (GNU tar or bsdtar format).
    const { stdout } = await execa("tar", ["-tvzf", join(dir, "a.tgz")], { env: { TZ: "UTC" } });
    for (const line of stdout.split("\n")) expect(line).toMatch(/1985-10-26 08:15|Oct 26\s+1985/);
    expect(stdout).toMatch(/^-rwxr-xr-x .*package\/bin\/run\.js$/m);
    expect(stdout).toMatch(/^-rw-r--r-- .*package\/README\.md$/m);
  });

  it("writes well-formed ustar blocks", () => {
    const tar = gunzipSync(createTarGz(FILES));
    expect(tar.length % 512).toBe(0);
    expect(tar.subarray(257, 265).toString("latin1")).toBe("ustar\x0000");
    expect(tar.subarray(tar.length - 1024).every((b) => b === 0)).toBe(true);
  });

  it("is deterministic byte for byte", () => {
    expect(createTarGz(FILES).equals(createTarGz(FILES))).toBe(true);
    expect(createTarGz([]).equals(createTarGz([]))).toBe(true);
  });

  it("rejects paths that do not fit ustar's 255 bytes", () => {
    const tooLong = `${"c".repeat(150)}/${"d".repeat(100)}/x.txt`;
    expect(() => createTarGz([{ path: tooLong, contents: Buffer.alloc(1) }])).toThrow(
      /path too long.*255/,
    );
    // Short enough overall, but a single 101-byte file name cannot be split at a "/".
    expect(() =>
      createTarGz([{ path: `p/${"e".repeat(101)}`, contents: Buffer.alloc(1) }]),
    ).toThrow(/path too long/);
  });
});

describe("readTarGz", () => {
  it("reads back what createTarGz wrote", () => {
    const read = readTarGz(createTarGz(FILES));
    expect(read.map((e) => [e.path, e.contents.toString("hex")])).toEqual(
      FILES.map((f) => [f.path, f.contents.toString("hex")]),
    );
  });

  it("refuses a gzip bomb at its size limit instead of inflating it whole", () => {
    // 80 MiB of zeros inside one entry: about 80 KB of gzip.
    const bomb = createTarGz([{ path: "package/zeros", contents: Buffer.alloc(80 * 1024 * 1024) }]);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    expect(() => readTarGz(bomb, 8 * 1024 * 1024)).toThrow("tar: it unpacks to more than 8 MiB");
    expect(readTarGz(bomb, 100 * 1024 * 1024)[0]!.contents.length).toBe(80 * 1024 * 1024);
  });

  it("refuses what is not gzip, and an entry that runs past the archive's end", () => {
    expect(() => readTarGz(Buffer.from("not a tarball"))).toThrow(/tar: it is not a gzip archive/);
    const tar = gunzipSync(createTarGz([{ path: "package/a", contents: Buffer.alloc(4096, 1) }]));
    const cut = gzipSync(tar.subarray(0, 1024));
    expect(() => readTarGz(cut)).toThrow('tar: the entry "package/a" runs past the archive\'s end');
  });
});
