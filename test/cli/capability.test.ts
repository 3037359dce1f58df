import { existsSync, watch, writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, scaffold, snapshotTree, tempDir } from "./helpers.js";

const readJson = async (path: string) => JSON.parse(await readFile(path, "utf8"));

describe("create-agent add-capability", () => {
  it("adds the manifest entry, a typed handler stub and the generated code, then --check is clean", async () => {
    const dir = await scaffold();
    const result = await cli(
      [
        "add-capability",
        "translate",
        "--price",
        "0.05",
        "--description",
        "Translate a text",
        "--input",
        "text:string!",
        "--input",
        "glossary:string[]",
        "--output",
        "translation:string",
        "--output",
        "notes:string?",
      ],
      dir,
    );
    expect(result.exitCode, result.all).toBe(0);
    expect(result.stdout).toContain("src/capabilities/translate.ts");
    const manifest = await readJson(join(dir, "agent.json"));
    expect(Object.keys(manifest.capabilities)).toEqual([
      "summarize",
      "classify-review",
      "translate",
    ]);
    expect(manifest.capabilities.translate).toEqual({
      description: "Translate a text",
      pricing: { model: "per_job", amount: "0.05", currency: "USDC" },
      input_schema: {
        text: { type: "string", required: true },
        glossary: { type: "array", items: { type: "string" } },
      },
      output_schema: {
        translation: { type: "string" },
        notes: { type: "string", required: false },
      },
    });
    const types = await readFile(join(dir, "src/generated/types.ts"), "utf8");
    expect(types).toContain("export interface TranslateInput");
    expect(types).toMatch(/glossary\?: string\[\]/);
    expect(types).toMatch(/notes\?: string/);
    expect(await readFile(join(dir, "src/capabilities/translate.ts"), "utf8")).toContain(
      "input: TranslateInput",
    );
    expect((await cli(["generate", "--check"], dir)).exitCode).toBe(0);
  });

  it("uses sensible defaults: 0.01 USDC, a required text in, a text result out", async () => {
    const dir = await scaffold();
    expect((await cli(["add-capability", "shout"], dir)).exitCode).toBe(0);
    const { shout } = (await readJson(join(dir, "agent.json"))).capabilities;
    expect(shout.pricing.amount).toBe("0.01");
    expect(shout.input_schema).toEqual({ text: { type: "string", required: true } });
    expect(shout.output_schema).toEqual({ result: { type: "string" } });
  });

  it("keeps the formatting and key order of agent.json: add then remove gives back the same bytes", async () => {
    const dir = await scaffold();
    const manifest = await readJson(join(dir, "agent.json"));
    const tabbed =
      JSON.stringify({ version: manifest.version, name: manifest.name, ...manifest }, null, "\t") +
      "\n";
    await writeFile(join(dir, "agent.json"), tabbed);
    expect((await cli(["add-capability", "shout"], dir)).exitCode).toBe(0);
    const added = await readFile(join(dir, "agent.json"), "utf8");
    // Everything up to the last capability's closing brace is untouched; the new one follows it.
    expect(added.startsWith(tabbed.slice(0, tabbed.lastIndexOf("\t\t}") + 3))).toBe(true);
    expect(added).toMatch(/\n\t\t"shout": \{\n\t\t\t"pricing"/);
    const removed = await cli(["remove-capability", "shout"], dir);
    expect(removed.exitCode, removed.all).toBe(0);
    expect(await readFile(join(dir, "agent.json"), "utf8")).toBe(tabbed);
  });

  it.each([
    [["add-capability", "summarize"], 'capability "summarize" already exists'],
    [["add-capability", "Summarize"], "differ only in letter case"],
    [["add-capability", "../x"], 'capability name "../x" contains'],
    [["add-capability", "constructor"], "is reserved"],
    [["add-capability", "x", "--price", "-1"], '--price: amount "-1" is negative'],
    [["add-capability", "x", "--price", "0.0000001"], "has 7 decimal places"],
    [["add-capability", "x", "--input", "text"], '--input "text": expected <name>:<type>'],
    [["add-capability", "x", "--input", "text:str"], 'did you mean "string"'],
    [
      ["add-capability", "x", "--output", "my-field:string"],
      '--output "my-field:string": field name "my-field"',
    ],
    [
      ["add-capability", "x", "--input", "a:string", "--input", "a:integer"],
      'field "a" is given twice',
    ],
    [
      ["remove-capability", "nope"],
      'no capability "nope" in agent.json; it has "summarize", "classify-review"',
    ],
  ])("refuses %j with a clear message, exit 1 and no file changed", async (args, message) => {
    const dir = await scaffold();
    const before = await snapshotTree(dir);
    const result = await cli(args, dir);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(message);
    expect(await snapshotTree(dir)).toEqual(before);
  });

  it("refuses to edit a manifest that is already invalid, and says where", async () => {
    const dir = await scaffold();
    const manifest = await readJson(join(dir, "agent.json"));
    manifest.capabilities.summarize.pricing.currency = "EUR";
    await writeFile(join(dir, "agent.json"), JSON.stringify(manifest, null, 2));
    const before = await snapshotTree(dir);
    const result = await cli(["add-capability", "shout"], dir);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("fix them before changing capabilities");
    expect(result.stderr).toContain("$.capabilities.summarize.pricing.currency");
    expect(await snapshotTree(dir)).toEqual(before);
  });

  it("refuses to run outside a project", async () => {
    const dir = await tempDir();
    for (const args of [
      ["add-capability", "x"],
      ["remove-capability", "x"],
    ]) {
      const result = await cli(args, dir);
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toContain("no agent.json in");
    }
    expect(await snapshotTree(dir)).toEqual({});
  });

  it("without its name: says what is missing and how to see the usage, also through npm run (not `npm run add`)", async () => {
    const result = await cli(["add-capability"], await tempDir());
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("missing required argument 'name'");
    expect(result.stderr).toContain("npm run <script> -- --help");
  });

  it("works on another folder with --cwd", async () => {
    const dir = await scaffold();
    expect((await cli(["add-capability", "shout", "--cwd", dir], await tempDir())).exitCode).toBe(
      0,
    );
    expect(existsSync(join(dir, "src/capabilities/shout.ts"))).toBe(true);
  });

  it("keeps a handler file that already exists instead of overwriting it", async () => {
    const dir = await scaffold();
    await writeFile(join(dir, "src/capabilities/shout.ts"), "// mine\n");
    const result = await cli(["add-capability", "shout"], dir);
    expect(result.exitCode, result.all).toBe(0);
    expect(result.stdout).toContain("Kept your existing src/capabilities/shout.ts");
    expect(await readFile(join(dir, "src/capabilities/shout.ts"), "utf8")).toBe("// mine\n");
  });

  it("does not call a stub another generate wrote meanwhile (npm run dev's watcher) the user's existing file", async () => {
    const dir = await scaffold();
    const stub = join(dir, "src/capabilities/translate.ts");
    // What `npm run dev`'s watcher does on a save of agent.json: write the missing stub, as soon as it can.
    const watcher = watch(join(dir, "agent.json"), () => {
      if (!existsSync(stub)) writeFileSync(stub, "// the watcher's stub\n", { flag: "wx" });
    });
    try {
      const result = await cli(["add-capability", "translate"], dir);
      expect(result.exitCode, result.all).toBe(0);
      expect(existsSync(stub)).toBe(true);
      expect(result.stdout).not.toContain("Kept your existing");
      expect(result.stdout).toContain("src/capabilities/translate.ts");
    } finally {
      watcher.close();
    }
  });
});

describe("create-agent remove-capability", () => {
  it("removes it from agent.json and the generated code, keeps the handler and says so", async () => {
    const dir = await scaffold();
    const result = await cli(["remove-capability", "classify-review"], dir);
    expect(result.exitCode, result.all).toBe(0);
    expect(result.stdout).toContain("Left src/capabilities/classify-review.ts in place");
    expect(Object.keys((await readJson(join(dir, "agent.json"))).capabilities)).toEqual([
      "summarize",
    ]);
    for (const file of ["types.ts", "validators.ts", "registry.ts", "samples.ts"]) {
      expect(await readFile(join(dir, "src/generated", file), "utf8")).not.toMatch(
        /classify|ClassifyReview/,
      );
    }
    expect(existsSync(join(dir, "src/capabilities/classify-review.ts"))).toBe(true);
    expect((await cli(["generate", "--check"], dir)).exitCode).toBe(0);
  });

  it("refuses to remove the last capability", async () => {
    const dir = await scaffold();
    expect((await cli(["remove-capability", "classify-review"], dir)).exitCode).toBe(0);
    const before = await snapshotTree(dir);
    const result = await cli(["remove-capability", "summarize"], dir);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("is the only capability");
    expect(await snapshotTree(dir)).toEqual(before);
  });
});
