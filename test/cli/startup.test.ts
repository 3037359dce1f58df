// What the CLI loads before a command runs: main.ts imports each command's implementation inside its
// action, so `--version` and `--help` load no generator, `generate` no scaffolding or caller code, and `call`
// no generator. Checked by listing every module the ESM loader loads (a module.register() load hook).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { CLI, scaffold, tempDir } from "./helpers.js";

const DIST = pathToFileURL(join(import.meta.dirname, "../../dist/")).href;

const RECORDER = `
import { register } from "node:module";
import { MessageChannel } from "node:worker_threads";
import { writeSync } from "node:fs";
const { port1, port2 } = new MessageChannel();
const loaded = [];
port1.on("message", (url) => loaded.push(url));
port1.unref();
const hooks = \`
let port;
export function initialize(data) { port = data.port; }
export async function load(url, context, next) {
  if (!url.startsWith("node:")) port.postMessage(url);
  return next(url, context);
}\`;
register("data:text/javascript," + encodeURIComponent(hooks), {
  data: { port: port2 },
  transferList: [port2],
});
process.on("exit", () => writeSync(2, "\\nLOADED " + JSON.stringify(loaded) + "\\n"));
`;

/** Runs the CLI; returns the modules it loaded: dist modules as "cli/main.js", packages by name. */
async function loadedBy(args: string[], cwd?: string): Promise<string[]> {
  const recorder = join(await tempDir(), "recorder.mjs");
  await writeFile(recorder, RECORDER);
  const result = await execa("node", ["--import", pathToFileURL(recorder).href, CLI, ...args], {
    cwd,
    reject: false,
    stdin: "ignore",
    env: { npm_config_user_agent: "" },
  });
  const line = result.stderr.split("\n").find((l) => l.startsWith("LOADED "));
  expect(line, result.stderr).toBeDefined();
  const urls = JSON.parse(line!.slice("LOADED ".length)) as string[];
  return urls.map((url) => {
    if (url.startsWith(DIST)) return url.slice(DIST.length);
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    return pkg ? pkg[1]! : url;
  });
}

const HEAVY = [
  "prettier",
  "json-schema-to-typescript",
  "handlebars",
  "ajv",
  "ajv-formats",
  "jsonc-parser",
];

describe("CLI start-up", () => {
  it("--version and --help load commander and a few small modules only", async () => {
    for (const args of [["--version"], ["--help"], ["call", "--help"], ["generate", "--help"]]) {
      const loaded = await loadedBy(args);
      expect(loaded, args.join(" ")).toContain("cli/main.js");
      expect(
        loaded.filter((m) => HEAVY.includes(m)),
        args.join(" "),
      ).toEqual([]);
      expect(
        loaded.filter(
          (m) => /^(generate|scaffold|write)\//.test(m) && m !== "generate/package-manager.js",
        ),
        args.join(" "),
      ).toEqual([]);
      expect(loaded.filter((m) => m.startsWith("manifest/") && m !== "manifest/errors.js")).toEqual(
        [],
      );
    }
  });

  it("generate loads neither the scaffolding (create, staging, git, prompts) nor the caller", async () => {
    const dir = await scaffold();
    const loaded = await loadedBy(["generate", "--check"], dir);
    expect(loaded).toContain("cli/generate.js");
    for (const module of [
      "cli/create.js",
      "cli/prompts.js",
      "cli/call.js",
      "cli/client.js",
      "cli/capability.js",
      "cli/dev.js",
      "cli/watch.js",
      "scaffold/stage.js",
      "scaffold/git.js",
      "scaffold/starter-manifest.js",
      "caller/call.js",
      "caller/service.js",
    ])
      expect(loaded).not.toContain(module);
  });

  it("call loads no generator and no manifest validation", async () => {
    const loaded = await loadedBy(["call", "echo", "--input", "message=hi"], await tempDir());
    expect(loaded).toContain("cli/call.js");
    // main.js itself takes the package manager names (for --package-manager) from generate/.
    const generators = loaded.filter(
      (m) =>
        (m.startsWith("generate/") && m !== "generate/package-manager.js") ||
        m.startsWith("scaffold/"),
    );
    expect(generators).toEqual([]);
    for (const heavy of ["prettier", "json-schema-to-typescript", "handlebars"])
      expect(loaded).not.toContain(heavy);
  });
});
