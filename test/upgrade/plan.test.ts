// What upgrade decides for one file create-agent writes once, from the three versions: the one the old
// create-agent wrote (base), the project's (yours) and this create-agent's (next).
import { describe, expect, it } from "vitest";
import { newHomes } from "../../src/upgrade/new-home.js";
import { mergeFile } from "../../src/upgrade/plan.js";
import {
  compareVersions,
  toolVersionOf,
  vendoredToolPath,
} from "../../src/upgrade/project-version.js";
import { createTarGz, readTarGz } from "../../src/scaffold/tarball.js";

const labels = { ours: "yours", base: "create-agent 0.1.0", theirs: "create-agent 0.2.0" };
const decide = (base?: string, yours?: string, next?: string) =>
  mergeFile("f.ts", base, yours === undefined ? undefined : Buffer.from(yours), next, labels);

describe("mergeFile", () => {
  it("updates a file you never touched, and leaves one already equal to the new version", () => {
    expect(decide("a\n", "a\n", "b\n")).toMatchObject({ action: "update", after: "b\n" });
    expect(decide("a\n", "b\n", "b\n")).toBeUndefined();
    expect(decide("a\n", "a\n", "a\n")).toBeUndefined();
  });

  it("takes a CRLF checkout (git's autocrlf) for what it is, not an edit of every line, and keeps it CRLF; binary files as they are", () => {
    const crlf = (text: string) => text.replaceAll("\n", "\r\n");
    expect(decide("a\nb\n", crlf("a\nb\n"), "a\nc\n")).toMatchObject({
      action: "update",
      after: "a\r\nc\r\n",
    });
    expect(decide("a\nb\n", crlf("a\nb\n"), "a\nb\n")).toBeUndefined();
    expect(
      decide("1\n2\n3\n4\n5\n", crlf("1\nmine\n3\n4\n5\n"), "1\n2\n3\n4\ntheirs\n"),
    ).toMatchObject({
      action: "merge",
      after: crlf("1\nmine\n3\n4\ntheirs\n"),
    });
    expect(decide("a\n", crlf("a\n"), undefined)).toMatchObject({ action: "remove" });
    const old = Buffer.from([0x0d, 0x0a, 0x00]);
    const binary = Uint8Array.from([0x0d, 0x0a, 0x00, 0x01]);
    const change = mergeFile("v.bin", old.toString("utf8"), old, binary, labels);
    expect(change).toMatchObject({ action: "update" });
    expect(Buffer.from((change as { after: Uint8Array }).after)).toEqual(Buffer.from(binary));
  });

  it("merges your edits with create-agent's where they do not clash", () => {
    const change = decide("1\n2\n3\n4\n5\n", "1\nmine\n3\n4\n5\n", "1\n2\n3\n4\ntheirs\n");
    expect(change).toMatchObject({ action: "merge", after: "1\nmine\n3\n4\ntheirs\n" });
    // Only your edits, create-agent changed nothing: nothing to do.
    expect(decide("1\n2\n", "1\nmine\n", "1\n2\n")).toBeUndefined();
  });

  it("writes conflict markers where both changed the same lines", () => {
    const change = decide("1\n2\n3\n", "1\nmine\n3\n", "1\ntheirs\n3\n");
    expect(change).toMatchObject({ action: "conflict", conflicts: 1 });
    expect(change?.after).toBe(
      "1\n<<<<<<< yours\nmine\n||||||| create-agent 0.1.0\n2\n=======\ntheirs\n>>>>>>> create-agent 0.2.0\n3\n",
    );
  });

  it("keeps the lines you and create-agent both appended to .gitignore or .dockerignore (no duplicate, your line endings); a line both changed still conflicts", () => {
    const base = "node_modules\ndist\n";
    const next = "node_modules\ndist\ncoverage\n.cache\n";
    const yours = "node_modules\ndist\n.env.local\ncoverage\n";
    const crlf = (text: string) => text.replaceAll("\n", "\r\n");
    const merged = "node_modules\ndist\n.env.local\ncoverage\n.cache\n";
    for (const path of [".gitignore", ".dockerignore"])
      expect(mergeFile(path, base, Buffer.from(crlf(yours)), next, labels)).toMatchObject({
        action: "merge",
        after: crlf(merged),
      });
    expect(
      mergeFile(".gitignore", base, Buffer.from("node_modules\ndist\n.env.local"), next, labels),
    ).toMatchObject({
      action: "merge",
      after: "node_modules\ndist\n.env.local\ncoverage\n.cache\n",
    });
    expect(decide(base, yours, next)).toMatchObject({ action: "conflict" }); // not a line set
    const changed = mergeFile(
      ".gitignore",
      base,
      Buffer.from("node_modules\nbuild\n"),
      "node_modules\nout\n",
      labels,
    );
    expect(changed).toMatchObject({ action: "conflict", conflicts: 1 });
    // A negation re-includes what the lines before it excluded: their order matters, so it conflicts.
    const negated = mergeFile(
      ".gitignore",
      base,
      Buffer.from(`${base}!keep.log\n`),
      `${base}*.log\n`,
      labels,
    );
    expect(negated).toMatchObject({ action: "conflict", conflicts: 1 });
  });

  it("adds new files; a file you created at the same path is merged against nothing", () => {
    expect(decide(undefined, undefined, "new\n")).toMatchObject({ action: "add", after: "new\n" });
    expect(decide(undefined, "new\n", "new\n")).toBeUndefined();
    expect(decide(undefined, "mine\n", "theirs\n")).toMatchObject({ action: "conflict" });
  });

  it("removes a dropped file only if you never edited it", () => {
    expect(decide("old\n", "old\n", undefined)).toMatchObject({ action: "remove" });
    // You edited it: a modify/delete conflict (as git calls it), your copy kept as it is.
    expect(decide("old\n", "edited\n", undefined)).toEqual({
      path: "f.ts",
      action: "modify-delete",
      before: Buffer.from("edited\n"),
    });
    expect(decide("old\n", undefined, undefined)).toBeUndefined();
  });

  it("does not bring back a file you deleted", () => {
    expect(decide("a\n", undefined, "b\n")).toMatchObject({ action: "keep-deleted" });
    expect(decide("a\n", undefined, "a\n")).toBeUndefined();
  });
});

describe("newHomes: where a dropped file's code went", () => {
  const old = [
    'import { x } from "./x.js";',
    "",
    "/** Counts jobs in flight. */",
    "export function createDrain(): Drain {",
    "  let inFlight = 0;",
    "  const waiters: Array<() => void> = [];",
    "  return {",
    "    enter() {",
    "      inFlight++;",
    "      return () => release();",
    "    },",
    "  };",
    "}",
  ].join("\n");

  it("names the new files holding at least a quarter of its code lines, most first", () => {
    // Its code lines: the function's signature, `let inFlight`, `const waiters` and `return () => release()`.
    const moved = old.replace("export function", "function"); // 3 of the 4 kept
    const quarter = "  const waiters: Array<() => void> = [];\n"; // 1 of 4
    const homes = newHomes(old, [
      ["src/runtime/a.ts", "unrelated();\nconst something = else_();\n"],
      ["src/runtime/http/drain.ts", `// moved here\n${moved}`],
      ["src/runtime/b.ts", quarter],
    ]);
    expect(homes).toEqual(["src/runtime/http/drain.ts", "src/runtime/b.ts"]);
  });

  it("does not count blank lines, braces, comments or imports: sharing only those is no new home", () => {
    const boilerplate =
      'import { x } from "./x.js";\n/** Counts jobs in flight. */\n}\n  };\n    },\n  return {\n';
    expect(newHomes(old, [["src/runtime/other.ts", boilerplate]])).toEqual([]);
    expect(newHomes("}\n\n// only a comment\n", [["a.ts", "}\n"]])).toEqual([]);
  });

  it("names three at most", () => {
    const files = ["a", "b", "c", "d"].map((n) => [`${n}.ts`, old] as [string, string]);
    expect(newHomes(old, files)).toEqual(["a.ts", "b.ts", "c.ts"]);
  });
});

describe("the version a project records", () => {
  it("is createAgent.version, else the vendored tarball's name", () => {
    const vendored = { devDependencies: { "create-agent": "file:vendor/create-agent-0.1.0.tgz" } };
    expect(toolVersionOf(vendored)).toBe("0.1.0");
    expect(toolVersionOf({ ...vendored, createAgent: { version: "0.2.0" } })).toBe("0.2.0");
    expect(toolVersionOf({ name: "x" })).toBeUndefined();
    expect(toolVersionOf("nope")).toBeUndefined();
    expect(vendoredToolPath(vendored)).toBe("vendor/create-agent-0.1.0.tgz");
  });

  it("compares by major, minor, patch", () => {
    expect(compareVersions("0.1.0", "0.2.0")).toBeLessThan(0);
    expect(compareVersions("0.10.0", "0.9.9")).toBeGreaterThan(0);
    expect(compareVersions("1.0.0", "1.0.0")).toBe(0);
  });
});

describe("readTarGz", () => {
  it("reads back what createTarGz wrote, long paths included", () => {
    const long = `package/${"d/".repeat(60)}file.ts`;
    const files = [
      { path: "package/a.txt", contents: Buffer.from("hello") },
      { path: long, contents: Buffer.alloc(1500, 7), mode: 0o755 },
      { path: "package/empty", contents: Buffer.alloc(0) },
    ];
    expect(readTarGz(createTarGz(files))).toEqual([
      { path: "package/a.txt", contents: Buffer.from("hello"), mode: 0o644 },
      { path: long, contents: Buffer.alloc(1500, 7), mode: 0o755 },
      { path: "package/empty", contents: Buffer.alloc(0), mode: 0o644 },
    ]);
  });

  it("refuses an entry that would land outside the folder it is unpacked into", () => {
    const archive = createTarGz([{ path: "package/../../evil", contents: Buffer.from("x") }]);
    expect(() => readTarGz(archive)).toThrow(/outside the archive/);
  });
});
