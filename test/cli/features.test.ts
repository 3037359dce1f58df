// Optional features on a real scaffolded project, through the built CLI: `create --features`, then
// `add` and `remove` (what the project's `npm run add -- <feature>` runs), all without installing.
import { existsSync } from "node:fs";
import { chmod, lstat, mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { execa } from "execa";
import { parse as parseJsonc } from "jsonc-parser";
import { featureCommand } from "../../src/generate/package-manager.js";
import { CLI, cli, scaffold, snapshotTree, tempDir } from "./helpers.js";

const readJson = async (dir: string, file: string) =>
  JSON.parse(await readFile(join(dir, file), "utf8")) as Record<string, any>;
/** A command's stdout once it succeeded. */
const succeeded = (result: { exitCode?: number; all?: string; stdout: string }) => {
  expect(result.exitCode, result.all).toBe(0);
  return result.stdout;
};
const files = async (dir: string, under: string) =>
  Object.keys(await snapshotTree(dir)).filter((p) => p.startsWith(under));

describe("create --features", () => {
  it("carries only the folders, packages and features.ts lines of the chosen features, recorded", async () => {
    const dir = await scaffold("redis,solana");
    const pkg = await readJson(dir, "package.json");
    expect(pkg.createAgent.features).toEqual(["solana", "redis"]);
    expect(pkg.dependencies).toHaveProperty("@x402/svm");
    expect(pkg.dependencies).toHaveProperty("ioredis");
    expect(pkg.dependencies).not.toHaveProperty("@modelcontextprotocol/sdk");
    expect(pkg.dependencies).not.toHaveProperty("jose");
    expect(pkg.scripts).toMatchObject({ add: "create-agent add", remove: "create-agent remove" });
    expect(await files(dir, "src/runtime/mcp/")).toEqual([]);
    expect(await files(dir, "src/runtime/console/")).toEqual([]);
    expect((await files(dir, "src/runtime/payments/svm/")).length).toBeGreaterThan(3);
    const features = await readFile(join(dir, "src/runtime/features.ts"), "utf8");
    expect(features).toContain('"solana", // feature: solana');
    expect(features).toContain('"redis", // feature: redis');
    expect(features).not.toContain("// feature: mcp");
    const readme = await readFile(join(dir, "README.md"), "utf8");
    expect(readme).toContain("| `solana` | yes |");
    expect(readme).toContain("| `mcp` | no |");
    expect(readme).toContain("`npm run add -- mcp`");
  });

  it("--yes starts with mcp, a2a and console; none is the core alone", async () => {
    const defaults = await scaffold("mcp,a2a,console");
    const yes = join(defaults, "..", "yes");
    expect((await cli([yes, "--yes", "--no-install", "--no-git"])).exitCode).toBe(0);
    expect((await readJson(yes, "package.json")).createAgent.features).toEqual([
      "mcp",
      "a2a",
      "console",
    ]);
    const none = await scaffold("none");
    expect((await readJson(none, "package.json")).createAgent.features).toEqual([]);
    expect(Object.keys((await readJson(none, "package.json")).dependencies)).toEqual([
      "ajv",
      "ajv-formats",
      "express",
    ]);
  });

  it("refuses an unknown feature before writing anything, listing the valid ones", async () => {
    const dir = join(await scaffold("none"), "..", "other");
    const result = await cli([dir, "--yes", "--no-install", "--no-git", "--features", "mcp,sol"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe(
      'create-agent: --features: unknown feature "sol" (did you mean solana?): the features are solana, onchain, mcp, a2a, console, redis, queue, metrics, facilitator-auth',
    );
    // An empty list (an unset shell variable) is no silent core-only project.
    const empty = await cli([dir, "--yes", "--no-install", "--no-git", "--features", ""]);
    expect(empty.exitCode).toBe(1);
    expect(empty.stderr).toContain(
      '--features is empty: list the features (e.g. mcp,console), "all", or "none"',
    );
    expect(existsSync(dir)).toBe(false);
  });
});

describe("create-agent add / remove", () => {
  it("add then remove gives back the project as it was; add copies the folder, packages, record and features.ts", async () => {
    const dir = await scaffold("mcp,console");
    const before = await snapshotTree(dir);
    const added = await cli(["add", "solana", "--no-install"], dir);
    expect(added.exitCode, added.all).toBe(0);
    expect(added.stdout).toContain("Added solana");
    const pkg = await readJson(dir, "package.json");
    expect(pkg.createAgent.features).toEqual(["solana", "mcp", "console"]);
    expect(pkg.dependencies["@x402/svm"]).toBe("2.27.0");
    expect(pkg.dependencies["@solana/kit"]).toBe("5.5.1");
    expect(Object.keys(pkg.dependencies)).toEqual(Object.keys(pkg.dependencies).sort());
    // The same files as a project created with solana.
    const made = await snapshotTree(await scaffold("solana,mcp,console"));
    const after = await snapshotTree(dir);
    for (const path of Object.keys(made).filter((p) => p.startsWith("src/runtime/")))
      expect(after[path], path).toBe(made[path]);
    expect(after["README.md"]).toBe(made["README.md"]);

    const again = await cli(["add", "solana", "--no-install"], dir);
    expect(again.stdout).toContain("already has solana: nothing to do");

    const removed = await cli(["remove", "solana", "--no-install"], dir);
    expect(removed.exitCode, removed.all).toBe(0);
    expect(await snapshotTree(dir)).toEqual(before);
  });

  it("add and remove re-render the deployment files as a project made with that set has them (compose's worker, Redis), your edits kept", async () => {
    const dir = await scaffold("mcp");
    const before = await snapshotTree(dir);
    const compose = join(dir, "compose.yaml");
    await writeFile(compose, `# my note\n${await readFile(compose, "utf8")}`); // an edit of yours
    expect(succeeded(await cli(["add", "redis", "--no-install"], dir))).toMatch(
      /updated .*compose\.yaml/,
    );
    for (const feature of ["queue", "metrics"])
      succeeded(await cli(["add", feature, "--no-install"], dir));
    const made = await snapshotTree(await scaffold("mcp,redis,queue,metrics"));
    const after = await snapshotTree(dir);
    for (const path of ["README.md", "fly.toml", "deploy/agent.service", "deploy/proxy/nginx.conf"])
      expect(after[path], path).toBe(made[path]);
    expect(after["compose.yaml"]).toBe(`# my note\n${made["compose.yaml"]}`);
    expect(after["compose.yaml"]).toContain("worker:");

    for (const feature of ["metrics", "queue", "redis"])
      expect((await cli(["remove", feature, "--no-install"], dir)).exitCode).toBe(0);
    const back = await snapshotTree(dir);
    expect(back["compose.yaml"]).toBe(`# my note\n${before["compose.yaml"]}`);
    expect(back["compose.yaml"]).not.toContain("worker:");
    for (const path of ["README.md", "fly.toml", "deploy/agent.service", "deploy/proxy/nginx.conf"])
      expect(back[path], path).toBe(before[path]);
  });

  it("an edit of compose.yaml that clashes leaves nginx.conf as it is too: nginx names compose's instances", async () => {
    const dir = await scaffold("mcp");
    const compose = join(dir, "compose.yaml");
    await writeFile(compose, `${await readFile(compose, "utf8")}# my service\n`); // where redis goes
    const before = await snapshotTree(dir);
    const out = succeeded(await cli(["add", "redis", "--no-install"], dir));
    expect(out).toMatch(/compose\.yaml \(your edits clash/);
    expect(out).toMatch(/deploy\/proxy\/nginx\.conf \(it goes with compose\.yaml, left as it is\)/);
    const after = await snapshotTree(dir);
    for (const path of ["compose.yaml", "deploy/proxy/nginx.conf"])
      expect(after[path], path).toBe(before[path]);
    expect(after["README.md"]).not.toBe(before["README.md"]);
  });

  it("add of a feature the project has, whose packages an interrupted install left out, says to install them", async () => {
    const dir = await scaffold("mcp");
    succeeded(await cli(["add", "queue", "--no-install"], dir));
    const again = () => cli(["add", "queue", "--no-install"], dir).then(succeeded);
    expect(await again()).not.toMatch(/not all installed/); // never installed: nothing to say
    for (const name of ["express", "ioredis"]) {
      await mkdir(join(dir, "node_modules", name), { recursive: true });
      await writeFile(join(dir, "node_modules", name, "package.json"), "{}");
    }
    expect(await again()).toMatch(
      /already has queue: nothing to do\.\nIts packages are not all installed \(bullmq: .*\): run npm install\./,
    );
  });

  it("says what queue does without redis when a change leaves it so (add queue alone, remove redis under it), and to install first", async () => {
    const dir = await scaffold("mcp");
    const without =
      /Note: without redis, queue: its jobs run in this process only .*add -- redis adds it\./;
    const added = succeeded(await cli(["add", "queue", "--no-install"], dir));
    expect(added).toMatch(without);
    expect(added).toMatch(/Then: npm install, then npm run typecheck\./);
    expect(succeeded(await cli(["add", "redis", "--no-install"], dir))).not.toMatch(without);
    expect(succeeded(await cli(["remove", "redis", "--no-install"], dir))).toMatch(without);
  });

  it("a checkout with CRLF line endings (git's autocrlf on Windows) is not taken for edits: add and remove work, keeping CRLF", async () => {
    const dir = await scaffold("mcp");
    const tree = await snapshotTree(dir);
    expect(tree[".gitattributes"]).toContain("* text=auto eol=lf"); // what prevents it in git checkouts
    for (const [path, text] of Object.entries(tree))
      if (!path.endsWith(".tgz")) await writeFile(join(dir, path), text.replaceAll("\n", "\r\n"));
    succeeded(await cli(["add", "redis", "--no-install"], dir));
    const features = await readFile(join(dir, "src/runtime/features.ts"), "utf8");
    expect(features).toContain('  "redis", // feature: redis\r\n');
    expect(features.replaceAll("\r\n", "")).not.toContain("\n"); // every line still CRLF
    const pkg = await readFile(join(dir, "package.json"), "utf8");
    expect(pkg).toContain('"ioredis"');
    expect(pkg.replaceAll("\r\n", "")).not.toContain("\n"); // package.json too
    expect(succeeded(await cli(["remove", "mcp", "--no-install"], dir))).toContain("Removed mcp");
  });

  it("two adds at once both land: one waits for the other, then plans from what it wrote", async () => {
    const dir = await scaffold("mcp");
    const results = await Promise.all(
      ["redis", "metrics", "queue"].map((f) => cli(["add", f, "--no-install"], dir)),
    );
    for (const result of results) expect(result.exitCode, result.all).toBe(0);
    const pkg = await readJson(dir, "package.json");
    expect(pkg.createAgent.features).toEqual(["mcp", "redis", "queue", "metrics"]);
    expect(Object.keys(pkg.dependencies)).toEqual(
      expect.arrayContaining(["ioredis", "bullmq", "prom-client"]),
    );
    const features = await readFile(join(dir, "src/runtime/features.ts"), "utf8");
    for (const f of ["redis", "queue", "metrics"])
      expect(features).toContain(`"${f}", // feature: ${f}`);
    expect(await files(dir, "node_modules/.cache/create-agent-features.lock")).toEqual([]);
  });

  it("add of a feature the project has copies back the files of its folder that are missing, keeping your edits", async () => {
    const dir = await scaffold("mcp");
    const made = await snapshotTree(dir);
    const [gone, edited] = (await files(dir, "src/runtime/mcp/")).slice(0, 2) as [string, string];
    await rm(join(dir, gone));
    await writeFile(join(dir, edited), "// mine\n");
    const restored = succeeded(await cli(["add", "mcp", "--no-install"], dir));
    expect(restored).toContain(`1 of its files was missing: copied back ${gone}`);
    const after = await snapshotTree(dir);
    expect(after[gone]).toBe(made[gone]);
    expect(after[edited]).toBe("// mine\n");
    expect(after["package.json"]).toBe(made["package.json"]);
    expect(succeeded(await cli(["add", "mcp", "--no-install"], dir))).toContain("nothing to do");
  });

  it("add after you made the features.ts change yourself (the clash message's advice) succeeds, keeping your file", async () => {
    const dir = await scaffold("mcp");
    const file = join(dir, "src/runtime/features.ts");
    const edit = (text: string) => text.replace('  "evm",\n', '  "evm", // always\n');
    await writeFile(file, edit(await readFile(file, "utf8")));
    const clash = await cli(["add", "solana", "--no-install"], dir);
    expect(clash.exitCode).toBe(1);
    expect(clash.stderr).toContain("your edits clash");
    const wanted = edit(
      await readFile(join(await scaffold("solana,mcp"), "src/runtime/features.ts"), "utf8"),
    );
    await writeFile(file, wanted); // the solana lines added by hand, next to the edit
    succeeded(await cli(["add", "solana", "--no-install"], dir));
    expect(await readFile(file, "utf8")).toBe(wanted);
    expect((await readJson(dir, "package.json")).createAgent.features).toEqual(["solana", "mcp"]);
  });

  it("add onchain brings its folder and viem; remove gives the project back", async () => {
    const dir = await scaffold("mcp");
    const before = await snapshotTree(dir);
    const pkgBefore = await readJson(dir, "package.json");
    // No viem and no x402 client in a project without the feature (call installs its client on first use).
    for (const section of ["dependencies", "devDependencies"])
      for (const name of ["viem", "@x402/evm", "@x402/fetch", "@x402/core"])
        expect(pkgBefore[section][name], `${section} ${name}`).toBeUndefined();
    expect(await files(dir, "src/runtime/payments/evm/onchain/")).toEqual([]);

    const added = await cli(["add", "onchain", "--no-install"], dir);
    expect(added.exitCode, added.all).toBe(0);
    const made = await snapshotTree(await scaffold("onchain,mcp"));
    const after = await snapshotTree(dir);
    expect(await files(dir, "src/runtime/payments/evm/onchain/")).toEqual(
      Object.keys(made).filter((p) => p.startsWith("src/runtime/payments/evm/onchain/")),
    );
    for (const path of Object.keys(made).filter((p) => p.startsWith("src/runtime/")))
      expect(after[path], path).toBe(made[path]);
    const pkg = await readJson(dir, "package.json");
    expect(pkg.dependencies).toEqual(
      (JSON.parse(made["package.json"]!) as Record<string, any>).dependencies,
    );
    expect(pkg.dependencies.viem).toBe("2.57.1");

    const removed = await cli(["remove", "onchain", "--no-install"], dir);
    expect(removed.exitCode, removed.all).toBe(0);
    expect(await snapshotTree(dir)).toEqual(before);
  });

  it("remove refuses while your code imports from the folder (--force goes on); keeps a package your own code imports, and drops the removed folder's typecheck cache and dist/ output", async () => {
    const dir = await scaffold("onchain,mcp");
    await mkdir(join(dir, "src/lib"), { recursive: true });
    await writeFile(
      join(dir, "src/lib/chain.ts"),
      'import { isAddress } from "viem";\nexport const ok = isAddress;\n',
    );
    // Where the project's own tsconfig files put the runtime's declarations and the build (so a move of
    // either in the templates that remove does not follow fails here).
    const outDir = async (file: string) =>
      join(
        dir,
        file,
        "..",
        parseJsonc(await readFile(join(dir, file), "utf8")).compilerOptions.outDir,
      );
    const cached = join(
      await outDir("src/runtime/tsconfig.json"),
      "payments/evm/onchain/module.d.ts",
    );
    const built = join(
      await outDir("tsconfig.build.json"),
      "runtime/payments/evm/onchain/module.js",
    );
    const kept = join(await outDir("tsconfig.build.json"), "runtime/app.js");
    expect(cached).toContain("/node_modules/"); // a cache, never the user's files
    for (const file of [cached, built, kept]) {
      await mkdir(join(file, ".."), { recursive: true });
      await writeFile(file, "// built\n");
    }
    // Your code importing from the folder, in src/, scripts/ or at the top: refused, naming it, nothing
    // changed (it would no longer typecheck); features.ts imports it too, but remove rewrites that one.
    const mine = join(dir, "src/lib/useonchain.ts");
    await writeFile(
      mine,
      'export { watchChain } from "../runtime/payments/evm/onchain/module.js";\n',
    );
    await mkdir(join(dir, "scripts"));
    const module = "src/runtime/payments/evm/onchain/module.js";
    await writeFile(join(dir, "scripts/watch.ts"), `import "../${module}";\n`);
    await writeFile(join(dir, "tool.config.mjs"), `await import("./${module}");\n`);
    const before = await snapshotTree(dir);
    const refused = await cli(["remove", "onchain", "--no-install"], dir);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(
      `your code imports from src/runtime/payments/evm/onchain/, which remove onchain deletes: scripts/watch.ts imports "../${module}"; src/lib/useonchain.ts imports "../runtime/payments/evm/onchain/module.js"; tool.config.mjs imports "./${module}" (nothing was changed). Remove those imports first`,
    );
    expect(refused.stderr).not.toContain("features.ts");
    expect(await snapshotTree(dir)).toEqual(before);
    const removed = await cli(["remove", "onchain", "--no-install", "--force"], dir);
    expect(removed.exitCode, removed.all).toBe(0);
    expect(removed.stdout).toContain(
      'your src/lib/useonchain.ts imports "../runtime/payments/evm/onchain/module.js": it no longer typechecks (--force)',
    );
    expect(removed.stdout).toContain("kept your viem@2.57.1 (src/lib/chain.ts imports it)");
    expect((await readJson(dir, "package.json")).dependencies.viem).toBe("2.57.1");
    await expect(lstat(cached)).rejects.toThrow();
    await expect(lstat(built)).rejects.toThrow();
    expect(await readFile(kept, "utf8")).toBe("// built\n");
  });

  it("add keeps a file you already have in the folder, and merges your edits to features.ts", async () => {
    const dir = await scaffold("none");
    await mkdir(join(dir, "src/runtime/mcp"));
    await writeFile(join(dir, "src/runtime/mcp/route.ts"), "// mine\n");
    const featuresFile = join(dir, "src/runtime/features.ts");
    const edited = (await readFile(featuresFile, "utf8")) + "\nexport const MINE = 1;\n";
    await writeFile(featuresFile, edited);
    const result = await cli(["add", "mcp", "--no-install"], dir);
    expect(result.exitCode, result.all).toBe(0);
    expect(result.stdout).toContain("kept your src/runtime/mcp/route.ts");
    expect(await readFile(join(dir, "src/runtime/mcp/route.ts"), "utf8")).toBe("// mine\n");
    const features = await readFile(featuresFile, "utf8");
    expect(features).toContain('"mcp", // feature: mcp');
    expect(features).toContain("export const MINE = 1;");
  });

  it("refuses a features.ts edit that clashes, changing nothing", async () => {
    const dir = await scaffold("none");
    const featuresFile = join(dir, "src/runtime/features.ts");
    await writeFile(
      featuresFile,
      (await readFile(featuresFile, "utf8")).replace('  "evm",\n', '  "evm", // mine\n'),
    );
    const before = await snapshotTree(dir);
    const result = await cli(["add", "solana", "--no-install"], dir);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(
      "src/runtime/features.ts: your edits clash with the lines add solana changes (nothing was changed)",
    );
    expect(await snapshotTree(dir)).toEqual(before);
  });

  it("remove refuses a folder holding your edits, changing nothing; --force removes it", async () => {
    const dir = await scaffold("mcp,console");
    await writeFile(join(dir, "src/runtime/console/notes.ts"), "// my notes\n");
    const page = join(dir, "src/runtime/console/page.ts");
    await writeFile(page, (await readFile(page, "utf8")) + "// mine\n");
    const before = await snapshotTree(dir);
    const refused = await cli(["remove", "console", "--no-install"], dir);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(
      "src/runtime/console/ holds your work: src/runtime/console/page.ts (edited); src/runtime/console/notes.ts (yours: create-agent writes no such file) (nothing was changed)",
    );
    expect(refused.stderr).toContain("--force");
    expect(await snapshotTree(dir)).toEqual(before);
    await writeFile(page, (await readFile(page, "utf8")).replace("// mine\n", ""));
    // A link made there is work too (it used to go without a word).
    await rm(join(dir, "src/runtime/console/notes.ts"));
    await symlink("../../capabilities", join(dir, "src/runtime/console/mine"));
    const link = await cli(["remove", "console", "--no-install"], dir);
    expect(link.stderr).toContain(
      "holds your work: src/runtime/console/mine (yours: create-agent writes no such file)",
    );
    expect((await lstat(join(dir, "src/runtime/console/mine"))).isSymbolicLink()).toBe(true);

    const forced = await cli(["remove", "console", "--no-install", "--force"], dir);
    expect(forced.exitCode, forced.all).toBe(0);
    expect(await files(dir, "src/runtime/console/")).toEqual([]);
    expect((await readJson(dir, "package.json")).createAgent.features).toEqual(["mcp"]);
  });

  it("an unknown feature: exit 1 naming the valid ones; evm is always there", async () => {
    const dir = await scaffold("none");
    const unknown = await cli(["add", "solanna", "--no-install"], dir);
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toBe(
      'create-agent: unknown feature "solanna" (did you mean solana?): the features are solana, onchain, mcp, a2a, console, redis, queue, metrics, facilitator-auth',
    );
    const list = await cli(["add", "mcp,a2a", "--no-install"], dir);
    expect(list.exitCode).toBe(1);
    expect(list.stderr).toContain('add and remove take one feature at a time ("mcp,a2a")');
    const evm = await cli(["remove", "evm", "--no-install"], dir);
    expect(evm.exitCode).toBe(1);
    expect(evm.stderr).toContain("evm is always included");
    // Names are read as --features reads them: case and spaces do not matter.
    expect(succeeded(await cli(["add", " Redis", "--no-install"], dir))).toContain("Added redis");
  });

  it("refuses a project whose runtime is another create-agent's, naming upgrade", async () => {
    const dir = await scaffold("none");
    const pkg = await readJson(dir, "package.json");
    pkg.createAgent.version = "0.1.9";
    await writeFile(join(dir, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
    const before = await snapshotTree(dir);
    const result = await cli(["add", "mcp", "--no-install"], dir);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("this project's runtime is create-agent 0.1.9's");
    expect(result.stderr).toContain("upgrade");
    expect(await snapshotTree(dir)).toEqual(before);
  });
});

describe("installing after add / remove", () => {
  it("runs the install of the project's package manager (its lockfile), re-rendering files made for another without a false clash, and exits 1 saying how to retry when it fails", async () => {
    const dir = await scaffold("none");
    // Made with npm, before the record of it (as 0.2.0 projects were), then switched to pnpm: the README
    // as made is recognized (no false clash) and re-rendered for pnpm, which the record then names.
    const pkgFile = join(dir, "package.json");
    const made = await readJson(dir, "package.json");
    expect(made.createAgent.packageManager).toBe("npm");
    delete made.createAgent.packageManager;
    await writeFile(pkgFile, `${JSON.stringify(made, null, 2)}\n`);
    await writeFile(join(dir, "pnpm-lock.yaml"), "lockfileVersion: '9.0'\n");
    const bin = await tempDir();
    await writeFile(join(bin, "pnpm"), `#!/bin/sh\necho "$@" >> pm-ran.txt\n`);
    await chmod(join(bin, "pnpm"), 0o755);
    const run = (args: string[]) =>
      execa(process.execPath, [CLI, ...args], {
        cwd: dir,
        reject: false,
        all: true,
        stdin: "ignore",
        env: { PATH: bin, npm_config_user_agent: "" },
      });
    const added = await run(["add", "mcp"]);
    expect(added.exitCode, added.all).toBe(0);
    expect(added.stdout).toContain("Installing with pnpm...");
    expect(await readFile(join(dir, "pm-ran.txt"), "utf8")).toBe("install\n");
    expect(added.stdout).toMatch(/updated .*README\.md/);
    expect(added.stdout).not.toContain("left as it is");
    expect(await readFile(join(dir, "README.md"), "utf8")).toContain("pnpm install");
    expect((await readJson(dir, "package.json")).createAgent.packageManager).toBe("pnpm");

    await writeFile(join(bin, "pnpm"), "#!/bin/sh\nexit 7\n");
    const removed = await run(["remove", "mcp"]);
    expect(removed.exitCode).toBe(1);
    expect(removed.stderr).toContain(
      "`pnpm install` exited with code 7. The project's files already have the change",
    );
    expect((await readJson(dir, "package.json")).createAgent.features).toEqual([]);
    expect(removed.stdout).not.toContain("left as it is");
  });

  it("the README and messages name the project's scripts through `run` (pnpm add would install an npm package)", () => {
    expect(featureCommand("npm", "add", "solana")).toBe("npm run add -- solana");
    expect(featureCommand("pnpm", "add", "solana")).toBe("pnpm run add solana");
    expect(featureCommand("yarn", "remove", "redis")).toBe("yarn run remove redis");
    expect(featureCommand("bun", "add", "mcp")).toBe("bun run add mcp");
  });
});
