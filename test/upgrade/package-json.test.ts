// package.json's three-way merge: key by key, so edits on both sides that git would see as one hunk (a
// dependency added next to one create-agent bumps) merge cleanly; pinned versions follow create-agent;
// a value both sides changed differently gets conflict markers at its line.
import { describe, expect, it } from "vitest";
import { mergePackageJson } from "../../src/upgrade/package-json.js";

const labels = { ours: "yours", base: "create-agent 0.1.0", theirs: "create-agent 0.2.0" };
const text = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const base = {
  name: "shop-agent",
  private: true,
  scripts: { dev: "create-agent dev", start: "exec node dist/server.js", test: "vitest run" },
  dependencies: { ajv: "8.17.1", express: "5.1.0" },
  devDependencies: { "create-agent": "file:vendor/create-agent-0.1.0.tgz", tsx: "4.0.0" },
};
const merge = (ours: unknown, theirs: unknown) =>
  mergePackageJson(text(base), text(ours), text(theirs), labels);

describe("mergePackageJson", () => {
  it("keeps your scripts and added dependencies while create-agent's pins and new keys arrive", () => {
    const ours = structuredClone(base) as any;
    ours.scripts.start = "exec node --enable-source-maps dist/server.js";
    ours.scripts.lint = "eslint .";
    ours.dependencies["left-pad"] = "1.3.0"; // between express and nothing: git would see one hunk
    const theirs = structuredClone(base) as any;
    theirs.dependencies.express = "5.3.0";
    theirs.dependencies.ajv = "8.18.0";
    theirs.devDependencies["create-agent"] = "file:vendor/create-agent-0.2.0.tgz";
    theirs.scripts.upgrade = "x";
    theirs.createAgent = { version: "0.2.0" };

    const result = merge(ours, theirs);
    expect(result.conflicts).toBe(0);
    const merged = JSON.parse(result.text);
    expect(merged.scripts).toEqual({ ...ours.scripts, upgrade: "x" });
    expect(merged.dependencies).toEqual({ ajv: "8.18.0", express: "5.3.0", "left-pad": "1.3.0" });
    expect(Object.keys(merged.dependencies)).toEqual(["ajv", "express", "left-pad"]); // still sorted
    expect(merged.devDependencies["create-agent"]).toBe("file:vendor/create-agent-0.2.0.tgz");
    expect(merged.createAgent).toEqual({ version: "0.2.0" });
    expect(result.dependencyChanges).toEqual([
      { section: "dependencies", name: "ajv", from: "8.17.1", to: "8.18.0" },
      { section: "dependencies", name: "express", from: "5.1.0", to: "5.3.0" },
      {
        section: "devDependencies",
        name: "create-agent",
        from: "file:vendor/create-agent-0.1.0.tgz",
        to: "file:vendor/create-agent-0.2.0.tgz",
      },
    ]);
    expect(result.overridden).toEqual([]);
    expect(result.text.endsWith("}\n")).toBe(true);
  });

  it("moves a pin you changed to create-agent's new one, and says so; a pin it kept stays yours", () => {
    const ours = structuredClone(base) as any;
    ours.dependencies.express = "5.2.0";
    ours.devDependencies.tsx = "4.1.0";
    const theirs = structuredClone(base) as any;
    theirs.dependencies.express = "5.3.0";
    const result = merge(ours, theirs);
    const merged = JSON.parse(result.text);
    expect(merged.dependencies.express).toBe("5.3.0");
    expect(merged.devDependencies.tsx).toBe("4.1.0");
    expect(result.overridden).toEqual(['express: yours "5.2.0", now "5.3.0" (dependencies)']);
    expect(result.conflicts).toBe(0);
  });

  it("removes what create-agent dropped unless you changed it; keeps what you removed removed", () => {
    const ours = structuredClone(base) as any;
    delete ours.scripts.test;
    const theirs = structuredClone(base) as any;
    delete theirs.devDependencies.tsx;
    const merged = JSON.parse(merge(ours, theirs).text);
    expect(merged.scripts.test).toBeUndefined();
    expect(merged.devDependencies.tsx).toBeUndefined();
  });

  it("writes conflict markers at the line of a value both changed differently (and counts it)", () => {
    const ours = structuredClone(base) as any;
    ours.scripts.dev = "create-agent dev --inspect";
    const theirs = structuredClone(base) as any;
    theirs.scripts.dev = "create-agent dev --fast";
    const result = merge(ours, theirs);
    expect(result.conflicts).toBe(1);
    expect(result.text).toContain(
      [
        "<<<<<<< yours",
        '    "dev": "create-agent dev --inspect",',
        "||||||| create-agent 0.1.0",
        '    "dev": "create-agent dev",',
        "=======",
        '    "dev": "create-agent dev --fast",',
        ">>>>>>> create-agent 0.2.0",
        '    "start": "exec node dist/server.js",',
      ].join("\n"),
    );
  });

  it("keeps your indentation, and is the identity when nothing changed on create-agent's side", () => {
    const ours = { ...base, description: "mine" };
    const tabbed = `${JSON.stringify(ours, null, "\t")}\n`;
    const result = mergePackageJson(text(base), tabbed, text(base), labels);
    expect(result.text).toBe(tabbed);
    // A CRLF checkout (git's autocrlf) stays CRLF, create-agent's changes too.
    const crlf = text(ours).replaceAll("\n", "\r\n");
    const theirs = { ...base, scripts: { ...base.scripts, build: "tsc" } };
    const merged = mergePackageJson(text(base), crlf, text(theirs), labels).text;
    expect(merged).toContain('"build": "tsc"\r\n');
    expect(merged.replaceAll("\r\n", "")).not.toContain("\n");
  });

  it("refuses a package.json that is not JSON, naming which", () => {
    expect(() => mergePackageJson(text(base), "{ nope", text(base), labels)).toThrow(
      /package\.json \(yours\) is not valid JSON/,
    );
  });
});
