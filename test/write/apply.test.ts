// applyFiles: what `generate` and `add-capability` write, all or nothing. A file that cannot be written
// (here: its staged copy blocked by a folder of that name, which root's permissions cannot bypass; a
// handler folder not writable, for a user) leaves every other file as it was: never generated code
// importing a handler that is not there.
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../temp.js";
import { applyFiles } from "../../src/write/apply.js";

describe("applyFiles", () => {
  it("one file that cannot be written: nothing is written, the others stay as they were", async () => {
    const root = await tempDir("apply-");
    await mkdir(join(root, "src/generated"), { recursive: true });
    await mkdir(join(root, "src/capabilities"));
    await writeFile(join(root, "src/generated/registry.ts"), "old registry\n");
    // The new handler's staged copy cannot be made: a folder (not empty) has its name.
    await mkdir(join(root, `src/capabilities/classify.ts.${process.pid}.staged.tmp/x`), {
      recursive: true,
    });
    const files = [
      {
        path: "src/generated/registry.ts",
        contents: "imports ../capabilities/classify.js\n",
        owner: "generated" as const,
      },
      {
        path: "src/capabilities/classify.ts",
        contents: "export default 1;\n",
        owner: "user" as const,
      },
    ];
    await expect(applyFiles(root, files)).rejects.toThrow();
    expect(await readFile(join(root, "src/generated/registry.ts"), "utf8")).toBe("old registry\n");
    expect((await readdir(join(root, "src/generated"))).sort()).toEqual(["registry.ts"]);
    expect(await readdir(join(root, "src/capabilities"))).not.toContain("classify.ts");
  });

  it("a folder where a generated file goes: refused before anything is written", async () => {
    const root = await tempDir("apply-");
    await mkdir(join(root, "src/generated/discovery.ts"), { recursive: true });
    await writeFile(join(root, "src/generated/types.ts"), "old types\n");
    const files = [
      { path: "src/generated/types.ts", contents: "new types\n", owner: "generated" as const },
      { path: "src/generated/discovery.ts", contents: "new\n", owner: "generated" as const },
    ];
    await expect(applyFiles(root, files)).rejects.toThrow(
      /discovery\.ts is a folder, where a file goes/,
    );
    expect(await readFile(join(root, "src/generated/types.ts"), "utf8")).toBe("old types\n");
  });
});
