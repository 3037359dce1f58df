import { chmod, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../temp.js";
import { writeFileAtomic } from "../../src/write/atomic.js";

describe("writeFileAtomic", () => {
  it("replaces a file keeping its permissions, leaving no temp file", async () => {
    const dir = await tempDir("atomic-");
    const file = join(dir, "secret.env");
    await writeFile(file, "A=1\n");
    await chmod(file, 0o600);
    await writeFileAtomic(file, "A=2\n");
    expect(await readFile(file, "utf8")).toBe("A=2\n");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(["secret.env"]);
  });

  it("makes a new file (and its folders) with the default permissions", async () => {
    const dir = await tempDir("atomic-");
    const file = join(dir, "a", "b", "new.ts");
    await writeFileAtomic(file, "x");
    expect(await readFile(file, "utf8")).toBe("x");
    expect((await stat(file)).mode & 0o777).toBe(0o666 & ~process.umask());
  });

  it("leaves the old file and no temp file when the rename cannot happen", async () => {
    const dir = await tempDir("atomic-");
    const folder = join(dir, "taken");
    await writeFileAtomic(join(folder, "inside"), "x"); // `taken` is a folder: a file cannot replace it
    await expect(writeFileAtomic(folder, "y")).rejects.toThrow();
    expect((await readdir(dir)).sort()).toEqual(["taken"]);
  });
});
