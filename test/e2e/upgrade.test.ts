// `create-agent upgrade` on a real project made by an older create-agent: the 0.1.0 release, kept as the very
// tarball such a project vendors (fixtures/upgrade/create-agent-0.1.0.tgz). The project is scaffolded by that
// tool, edited the way users edit (a log line in the job pipeline, a middleware in app.ts, a changed script, an
// added dependency), then upgraded by this create-agent. The reference for "the new templates" is a project
// this create-agent scaffolds from the same agent.json.
import { createHash } from "node:crypto";
import { chmodSync, lstatSync, statSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNRECORDED_FEATURES } from "../../src/features.js";
import { createTarGz, readTarGz } from "../../src/scaffold/tarball.js";
import { CLI, E2E_MANIFEST } from "./global-setup.js";

const REPO = join(import.meta.dirname, "../..");
const OLD_TOOL = join(REPO, "fixtures/upgrade/create-agent-0.1.0.tgz");
const NEW_VERSION: string = JSON.parse(await readFile(join(REPO, "package.json"), "utf8")).version;

let work: string;
let oldPristine: string;
let fresh: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "create-agent-upgrade-e2e-"));
  // The 0.1.0 CLI, unpacked, with the repo's node_modules for its dependencies.
  const tool = join(work, "tool-0.1.0");
  for (const entry of readTarGz(await readFile(OLD_TOOL))) {
    const path = join(tool, entry.path.replace(/^package\//, ""));
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, entry.contents);
  }
  await symlink(join(REPO, "node_modules"), join(tool, "node_modules"), "dir");
  oldPristine = join(work, "made-by-0.1.0");
  fresh = join(work, "made-by-new");
  const scaffold = (cli: string, dir: string, ...extra: string[]) =>
    execa(
      "node",
      [cli, dir, "--yes", "--no-install", "--no-git", "--manifest", E2E_MANIFEST, ...extra],
      { env: { npm_config_user_agent: "" } },
    );
  await scaffold(join(tool, "bin/create-agent.js"), oldPristine);
  // A project made before features existed upgrades to one with every feature of its time.
  await scaffold(CLI, fresh, "--features", UNRECORDED_FEATURES.join(","));
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** A fresh copy of the project 0.1.0 made. */
async function oldProject(name: string): Promise<string> {
  const dir = join(work, name);
  await cp(oldPristine, dir, { recursive: true });
  return dir;
}

function upgrade(dir: string, ...args: string[]) {
  return execa("node", [CLI, "upgrade", ...args], { cwd: dir, reject: false });
}

/** Every file of a project (but node_modules) by path, as a hash of its bytes. */
async function snapshot(dir: string, prefix = ""): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.name === "node_modules") continue;
    if (entry.isDirectory()) for (const [p, h] of await snapshot(dir, path)) files.set(p, h);
    else
      files.set(
        path,
        createHash("sha256")
          .update(await readFile(join(dir, path)))
          .digest("hex"),
      );
  }
  return files;
}

const read = (dir: string, path: string) => readFile(join(dir, path), "utf8");

/** Every folder of a project (but node_modules), sorted. */
const folders = async (dir: string): Promise<string[]> =>
  (await readdir(dir, { withFileTypes: true, recursive: true }))
    .filter((e) => e.isDirectory() && !join(e.parentPath, e.name).includes("node_modules"))
    .map((e) => join(e.parentPath, e.name))
    .sort();

async function edit(dir: string, path: string, change: (text: string) => string) {
  const before = await read(dir, path);
  const after = change(before);
  expect(after, `the edit of ${path} applies`).not.toBe(before);
  await writeFile(join(dir, path), after);
}

const MIDDLEWARE = `  app.use((_req, res, next) => {
    res.setHeader("X-Served-By", agent.name);
    next();
  });
`;
const LOG_LINE = `    logger.info("job received", { deadline: job.deadline });\n`;
const START = "exec node --enable-source-maps dist/server.js";

/** The edits users make that create-agent's changes since 0.1.0 do not touch. */
async function userEdits(dir: string, options: { addDependency?: boolean } = {}) {
  await edit(dir, "src/runtime/app.ts", (t) =>
    t.replace('  app.disable("x-powered-by");\n', (line) => line + MIDDLEWARE),
  );
  await edit(dir, "src/runtime/jobs/pipeline.ts", (t) =>
    t.replace(
      "    logger = logger.child({ job_id: job.jobId, capability: job.capability });\n",
      (line) => line + LOG_LINE,
    ),
  );
  await edit(dir, "package.json", (t) => {
    const pkg = JSON.parse(t);
    pkg.scripts.start = START;
    if (options.addDependency) pkg.dependencies["left-pad"] = "1.3.0";
    return `${JSON.stringify(pkg, null, 2)}\n`;
  });
}

/** Files this create-agent writes once (not the manifest, handlers, package.json, vendor or generated code). */
async function ownedFiles(): Promise<string[]> {
  return [...(await snapshot(fresh)).keys()].filter(
    (p) =>
      p !== "agent.json" &&
      p !== "package.json" &&
      !p.startsWith("src/capabilities/") &&
      !p.startsWith("src/generated/") &&
      !p.startsWith("vendor/"),
  );
}

describe("create-agent upgrade, from a project made by create-agent 0.1.0", () => {
  it("--check and --dry-run write nothing; --check exits 1 and this create-agent refuses to regenerate the project", async () => {
    const dir = await oldProject("check");
    await userEdits(dir);
    const before = await snapshot(dir);

    const check = await upgrade(dir, "--check");
    expect(check.exitCode, check.stderr).toBe(1);
    expect(check.stderr).toContain(`made by create-agent 0.1.0; upgrading to ${NEW_VERSION}`);
    expect(check.stderr).toMatch(/merged +src\/runtime\/app\.ts/);
    expect(await snapshot(dir)).toEqual(before);

    const dry = await upgrade(dir, "--dry-run");
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("--- a/src/runtime/app.ts\n+++ b/src/runtime/app.ts\n");
    expect(dry.stdout).toContain("+  mountHealth(app, services, runtime.settlement);\n");
    expect(dry.stdout).toContain("--- /dev/null\n+++ b/src/runtime/handlers.ts\n");
    expect(dry.stdout).toContain("Would upgrade (create-agent 0.1.0 -> ");
    expect(await snapshot(dir)).toEqual(before);

    // Every later command of this create-agent says which version made the project, and to upgrade.
    const generate = await execa("node", [CLI, "generate"], { cwd: dir, reject: false });
    expect(generate.exitCode).toBe(1);
    expect(generate.stderr).toContain("this project was made by create-agent 0.1.0");
    expect(generate.stderr).toContain("upgrade");
    expect(await snapshot(dir)).toEqual(before);
  });

  it("a clean upgrade: untouched files become the new templates byte for byte, edits survive, and the project installs, typechecks and passes its tests", async () => {
    const dir = await oldProject("clean");
    await userEdits(dir);
    const handlersBefore = await snapshot(join(dir, "src/capabilities"));
    const manifestBefore = await read(dir, "agent.json");

    const result = await upgrade(dir);
    expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/merged +src\/runtime\/jobs\/pipeline\.ts \(your edits kept\)/);
    expect(result.stdout).toContain("npm install");

    const edited = new Set(["src/runtime/app.ts", "src/runtime/jobs/pipeline.ts"]);
    for (const path of await ownedFiles()) {
      const text = await read(dir, path);
      expect(text, path).not.toMatch(/^(<<<<<<<|=======|>>>>>>>) /m);
      if (!edited.has(path))
        expect(text, `${path} is the new template`).toBe(await read(fresh, path));
    }
    // The edits, merged into the new versions.
    const app = await read(dir, "src/runtime/app.ts");
    expect(app).toContain(MIDDLEWARE);
    expect(app).toContain("mountHealth(app, services, runtime.settlement);");
    expect(app.replace(MIDDLEWARE, "")).toBe(await read(fresh, "src/runtime/app.ts"));
    const pipeline = await read(dir, "src/runtime/jobs/pipeline.ts");
    expect(pipeline.replace(LOG_LINE, "")).toBe(await read(fresh, "src/runtime/jobs/pipeline.ts"));
    expect(pipeline).toContain(LOG_LINE);

    // package.json: your script kept; the vendored CLI, its record and the pins are the new ones.
    const pkg = JSON.parse(await read(dir, "package.json"));
    const freshPkg = JSON.parse(await read(fresh, "package.json"));
    expect(pkg.scripts).toEqual({ ...freshPkg.scripts, start: START });
    expect(pkg.dependencies).toEqual(freshPkg.dependencies);
    expect(pkg.devDependencies).toEqual(freshPkg.devDependencies);
    expect(pkg.createAgent).toEqual({
      version: NEW_VERSION,
      features: UNRECORDED_FEATURES, // no record before: every feature of its time
      packageManager: "npm",
    });
    expect(await readdir(join(dir, "vendor"))).toEqual([`create-agent-${NEW_VERSION}.tgz`]);
    expect(await readFile(join(dir, "vendor", `create-agent-${NEW_VERSION}.tgz`))).toEqual(
      await readFile(join(fresh, "vendor", `create-agent-${NEW_VERSION}.tgz`)),
    );
    // Never touched: the manifest and the handlers. Regenerated: src/generated/.
    expect(await read(dir, "agent.json")).toBe(manifestBefore);
    expect(await snapshot(join(dir, "src/capabilities"))).toEqual(handlersBefore);
    const generated = await snapshot(join(dir, "src/generated"));
    expect(generated).toEqual(await snapshot(join(fresh, "src/generated")));

    const again = await upgrade(dir, "--check");
    expect(again.exitCode, again.stderr).toBe(0);

    const env = {
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_prefer_offline: "true",
    };
    for (const args of [["install"], ["run", "typecheck"], ["test"]]) {
      const run = await execa("npm", args, { cwd: dir, env, reject: false, all: true });
      expect(run.exitCode, `npm ${args.join(" ")}:\n${run.all}`).toBe(0);
    }
    // An install, a typecheck and a test run: ~40 s on a quiet machine, over 180 s beside the containers' image build.
  }, 360_000);

  it("a clash: conflict markers in that file, listed, exit 1; every other change and edit is kept", async () => {
    const dir = await oldProject("clash");
    await userEdits(dir, { addDependency: true });
    const clashing = `res.status(answer.status).set(answer.headers).set("X-Job", "1").type("application/json").send(answer.body);`;
    await edit(dir, "src/runtime/app.ts", (t) =>
      t.replace(
        `res.status(answer.status).set(answer.headers).type("application/json").send(answer.body);`,
        clashing,
      ),
    );
    // A runtime file you deleted stays deleted, even though create-agent changed it.
    await rm(join(dir, "src/runtime/http/cors.ts"));

    const result = await upgrade(dir);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/1 file with conflicts[^\n]*\n {2}src\/runtime\/app\.ts\n/);
    expect(result.stdout).toMatch(/CONFLICT +src\/runtime\/app\.ts \(1 conflict/);
    expect(result.stdout).toMatch(/not restored +src\/runtime\/http\/cors\.ts/);

    const app = await read(dir, "src/runtime/app.ts");
    // /execute's handler left app.ts (it is http/execute.ts now), so your edited line clashes with
    // the whole block that replaced it: yours, 0.1.0's and this version's, each in full.
    const conflict =
      /^<<<<<<< yours\n([^]*?)^\|\|\|\|\|\|\| create-agent 0\.1\.0\n([^]*?)^=======\n([^]*?)^>>>>>>> create-agent (\S+)\n/m.exec(
        app,
      );
    expect(conflict, app).not.toBeNull();
    const [, yours, base, theirs, version] = conflict!;
    expect(version).toBe(NEW_VERSION);
    expect(yours).toContain(`        ${clashing}\n`);
    expect(base).toContain(
      `        res.status(answer.status).set(answer.headers).type("application/json").send(answer.body);\n`,
    );
    expect(theirs).not.toContain("res.status(answer.status)");
    expect(await read(dir, "src/runtime/http/execute.ts")).toContain("sendAnswer(");
    expect(app).toContain(MIDDLEWARE); // the edit that did not clash
    expect(app).toContain("mountHealth(app, services, runtime.settlement);"); // create-agent's changes that did not clash
    expect(await read(dir, "src/runtime/jobs/pipeline.ts")).toContain(LOG_LINE);
    expect(await read(dir, "src/runtime/payments/evm/verify.ts")).toBe(
      await read(fresh, "src/runtime/payments/evm/verify.ts"),
    );
    await expect(readFile(join(dir, "src/runtime/http/cors.ts"))).rejects.toThrow();
    const pkg = JSON.parse(await read(dir, "package.json"));
    expect(pkg.dependencies["left-pad"]).toBe("1.3.0");
    expect(pkg.scripts.start).toBe(START);
    expect(pkg.createAgent).toEqual({
      version: NEW_VERSION,
      features: UNRECORDED_FEATURES, // no record before: every feature of its time
      packageManager: "npm",
    });

    // The markers left unresolved: --check is not "up to date", and upgrade will not merge over them.
    const check = await upgrade(dir, "--check");
    expect(check.exitCode).toBe(1);
    expect(check.stderr).toMatch(
      /Unresolved upgrade: 1 file still holds the conflict markers[^\n]*\n {2}src\/runtime\/app\.ts\n/,
    );
    const before = await snapshot(dir);
    const again = await upgrade(dir);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toMatch(/still holds the conflict markers[^]*Nothing was changed/);
    expect(await snapshot(dir)).toEqual(before);
  });

  it("a file you edited that the new version no longer ships: a modify/delete conflict, exit 1, your copy kept, its code's new home named", async () => {
    // A 0.1.0 that also wrote src/runtime/http/legacy-drain.ts, whose code this create-agent has in drain.ts:
    // the project's vendored tarball gets that template, so upgrade's recovered base has the file.
    const dir = await oldProject("modify-delete");
    const moved = await readFile(join(REPO, "templates/runtime/http/drain.ts"));
    const vendored = join(dir, "vendor/create-agent-0.1.0.tgz");
    const entries = readTarGz(await readFile(vendored));
    entries.push({ path: "package/templates/runtime/http/legacy-drain.ts", contents: moved });
    await writeFile(vendored, createTarGz(entries));
    const yours = `${moved.toString("utf8")}\n// my tweak\nexport const DRAIN_TWEAKED = true;\n`;
    await writeFile(join(dir, "src/runtime/http/legacy-drain.ts"), yours);
    // The same file, never edited, in another copy: simply removed, exit 0 (as before).
    const untouched = await oldProject("modify-delete-untouched");
    await writeFile(join(untouched, "vendor/create-agent-0.1.0.tgz"), createTarGz(entries));
    await writeFile(join(untouched, "src/runtime/http/legacy-drain.ts"), moved);

    const result = await upgrade(dir);
    expect(result.exitCode, result.stdout + result.stderr).toBe(1);
    const why =
      `modify/delete: you edited it, create-agent ${NEW_VERSION} no longer ships it; your copy is kept; ` +
      "its code is now in src/runtime/http/drain.ts: move your edits there and delete this file";
    expect(result.stdout).toContain(`CONFLICT     src/runtime/http/legacy-drain.ts (${why})\n`);
    expect(result.stderr).toContain(
      `1 file in conflict (modify/delete): you edited it, create-agent ${NEW_VERSION} no longer ships it:\n` +
        `  src/runtime/http/legacy-drain.ts (${why.replace("modify/delete: ", "")})\n`,
    );
    expect(await read(dir, "src/runtime/http/legacy-drain.ts")).toBe(yours);
    // Everything else was upgraded.
    expect(await read(dir, "src/runtime/payments/evm/verify.ts")).toBe(
      await read(fresh, "src/runtime/payments/evm/verify.ts"),
    );

    const clean = await upgrade(untouched);
    expect(clean.exitCode, clean.stdout + clean.stderr).toBe(0);
    expect(clean.stdout).toMatch(/removed +src\/runtime\/http\/legacy-drain\.ts\n/);
    await expect(readFile(join(untouched, "src/runtime/http/legacy-drain.ts"))).rejects.toThrow();
  });

  it("keeps a file's permissions; refuses, writing nothing, a symbolic link where it writes a file", async () => {
    const dir = await oldProject("modes");
    chmodSync(join(dir, "src/runtime/app.ts"), 0o600);
    const shared = join(work, "shared-errors.ts");
    await cp(join(dir, "src/runtime/errors.ts"), shared);
    await rm(join(dir, "src/runtime/errors.ts"));
    await symlink(shared, join(dir, "src/runtime/errors.ts"));
    const foldersBefore = await folders(dir);
    await refusedUnchanged(dir, "src/runtime/errors.ts is a symbolic link");
    // Nor a folder made for the new files staged before it (deploy/, src/runtime/console/ sort first).
    expect(await folders(dir)).toEqual(foldersBefore);
    expect(lstatSync(join(dir, "src/runtime/errors.ts")).isSymbolicLink()).toBe(true);

    // Committed, then the link made a file again, uncommitted: upgrade says its diff mixes with that.
    const git = (...args: string[]) =>
      execa("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: dir });
    await git("init", "-q");
    await git("add", "-A");
    await git("commit", "-qm", "before upgrade");
    await rm(join(dir, "src/runtime/errors.ts"));
    await cp(shared, join(dir, "src/runtime/errors.ts"));
    const done = await upgrade(dir);
    expect(done.exitCode, done.stderr).toBe(0);
    expect(done.stderr).toContain("note: this project has uncommitted changes");
    expect(await read(dir, "src/runtime/app.ts")).not.toBe(
      await read(oldPristine, "src/runtime/app.ts"),
    );
    expect(statSync(join(dir, "src/runtime/app.ts")).mode & 0o777).toBe(0o600);
  });

  it("this create-agent's add on a 0.1.0 project points to upgrade (0.1.0 has no add script); a package.json that does not parse is named, not taken for no project", async () => {
    const dir = await oldProject("old-add");
    const add = await execa("node", [CLI, "add", "redis", "--no-install"], {
      cwd: dir,
      reject: false,
    });
    expect(add.exitCode).toBe(1);
    expect(add.stderr).toMatch(/Bring the project to \S+ first[^\n]*upgrade --cwd/);
    expect(add.stderr).not.toContain("npm run add");

    await edit(dir, "package.json", (t) => t.replace('"private": true,', '"private": true'));
    const before = await snapshot(dir);
    const generate = await execa("node", [CLI, "generate"], { cwd: dir, reject: false });
    expect(generate.exitCode).toBe(1);
    expect(generate.stderr).toMatch(/package\.json is not valid JSON at line \d+, column \d+/);
    expect(await snapshot(dir)).toEqual(before);
  });

  it("refuses, writing nothing, when agent.json is broken or the vendored create-agent is missing", async () => {
    const dir = await oldProject("broken");
    await writeFile(join(dir, "agent.json"), '{ "name": "x", ');
    await refusedUnchanged(dir, "agent.json");

    await cp(join(oldPristine, "agent.json"), join(dir, "agent.json"));
    // A write that fails: a folder where the new runtime file goes. Nothing else changes either.
    await mkdir(join(dir, "src/runtime/handlers.ts"));
    await refusedUnchanged(dir, "src/runtime/handlers.ts is a folder");
    expect((await readdir(dir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    await rm(join(dir, "src/runtime/handlers.ts"), { recursive: true });

    await rm(join(dir, "vendor"), { recursive: true });
    await refusedUnchanged(dir, "vendor/create-agent-0.1.0.tgz is missing");
  });
});

/** upgrade in `dir` refused (exit 1) saying `why` and that nothing was changed; and nothing was. */
async function refusedUnchanged(dir: string, why: string): Promise<void> {
  const before = await snapshot(dir);
  const result = await upgrade(dir);
  expect(result.exitCode).toBe(1);
  expect(result.stderr).toContain(why);
  expect(result.stderr).toMatch(/nothing was changed/i);
  expect(await snapshot(dir)).toEqual(before);
}
