import { cp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, scaffold, tempDir } from "./helpers.js";

describe("create-agent generate", () => {
  it("--check passes on a fresh project, and a second generate writes nothing", async () => {
    const dir = await scaffold();
    const before = (await stat(join(dir, "src/generated/types.ts"))).mtimeMs;
    expect((await cli(["generate", "--check"], dir)).exitCode).toBe(0);
    const again = await cli(["generate"], dir);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain("Nothing to do");
    expect((await stat(join(dir, "src/generated/types.ts"))).mtimeMs).toBe(before);
  });

  it("--check reports drift after a manifest edit without writing; generate fixes it; handlers are kept", async () => {
    const dir = await scaffold();
    const handlerPath = join(dir, "src/capabilities/summarize.ts");
    await writeFile(handlerPath, "// my own code\n");
    const manifest = JSON.parse(await readFile(join(dir, "agent.json"), "utf8"));
    manifest.capabilities.summarize.output_schema.word_count = { type: "integer" };
    await writeFile(join(dir, "agent.json"), JSON.stringify(manifest, null, 2));
    const typesBefore = await readFile(join(dir, "src/generated/types.ts"), "utf8");

    const check = await cli(["generate", "--check"], dir);
    expect(check.exitCode).toBe(1);
    expect(check.stderr).toContain("src/generated/types.ts");
    expect(await readFile(join(dir, "src/generated/types.ts"), "utf8")).toBe(typesBefore);

    const generate = await cli(["generate"], dir);
    expect(generate.exitCode, generate.all).toBe(0);
    expect(await readFile(join(dir, "src/generated/types.ts"), "utf8")).toContain(
      "word_count: number",
    );
    expect(await readFile(handlerPath, "utf8")).toBe("// my own code\n");
    expect((await cli(["generate", "--check"], dir)).exitCode).toBe(0);
  });

  it("names the handler a renamed capability left behind (never run), and no helper module", async () => {
    const dir = await scaffold();
    await writeFile(join(dir, "src/capabilities/shared.ts"), "export const helper = 1;\n");
    const manifest = JSON.parse(await readFile(join(dir, "agent.json"), "utf8"));
    manifest.capabilities["summarize-text"] = manifest.capabilities.summarize;
    delete manifest.capabilities.summarize;
    await writeFile(join(dir, "agent.json"), JSON.stringify(manifest, null, 2));
    const result = await cli(["generate"], dir);
    expect(result.exitCode, result.all).toBe(0);
    expect(result.stdout).toContain("wrote    src/capabilities/summarize-text.ts");
    expect(result.stderr).toBe(
      "warning: src/capabilities/summarize.ts is the handler of no capability in agent.json (renamed?): its code is never run. Move it into the new capability's handler, or delete it",
    );
  });

  it("removes generated files that are no longer produced", async () => {
    const dir = await scaffold();
    await writeFile(join(dir, "src/generated/old.ts"), "// left over\n");
    const result = await cli(["generate"], dir);
    expect(result.stdout).toContain("removed  src/generated/old.ts");
  });

  it("src/generated/ linked to a folder outside the project: refused, nothing written or removed there", async () => {
    const dir = await scaffold();
    const outside = await tempDir();
    await cp(join(dir, "src/generated"), outside, { recursive: true });
    await writeFile(join(outside, "precious.txt"), "mine");
    await rm(join(dir, "src/generated"), { recursive: true });
    await symlink(outside, join(dir, "src/generated"));
    await writeFile(join(outside, "types.ts"), "// edited\n");
    const result = await cli(["generate"], dir);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("refusing to write outside the project: src/generated/");
    expect(result.stderr).toContain("symbolic link");
    expect(result.stderr).not.toContain("unexpected error");
    expect(await readFile(join(outside, "precious.txt"), "utf8")).toBe("mine");
    expect(await readFile(join(outside, "types.ts"), "utf8")).toBe("// edited\n");
    // add-capability is refused the same way before it edits agent.json.
    const manifest = await readFile(join(dir, "agent.json"), "utf8");
    const add = await cli(["add-capability", "translate"], dir);
    expect(add.exitCode).toBe(1);
    expect(add.stderr).toContain("refusing to write outside the project");
    expect(await readFile(join(dir, "agent.json"), "utf8")).toBe(manifest);
    // A link to nothing: named, no stack trace.
    await rm(join(dir, "src/generated"));
    await symlink(join(outside, "gone"), join(dir, "src/generated"));
    const dangling = await cli(["generate"], dir);
    expect(dangling.exitCode).toBe(1);
    expect(dangling.stderr).toMatch(
      /src\/generated: it is a symbolic link to .*gone, which does not exist/,
    );
    expect(dangling.stderr).not.toContain("unexpected error");
  });

  it("refuses to run outside a project", async () => {
    const result = await cli(["generate"], await tempDir());
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("no agent.json in");
  });

  it("leaves every file as it was when the manifest is invalid", async () => {
    const dir = await scaffold();
    const typesBefore = await readFile(join(dir, "src/generated/types.ts"), "utf8");
    await writeFile(join(dir, "agent.json"), '{ "name": "agent", ');
    const result = await cli(["generate"], dir);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("agent.json:1:");
    expect(await readFile(join(dir, "src/generated/types.ts"), "utf8")).toBe(typesBefore);
  });
});
