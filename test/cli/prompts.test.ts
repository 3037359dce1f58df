// The interactive path: on a real terminal (a pseudo-terminal from util-linux `script`), without --yes,
// create-agent asks its questions, re-asks after a bad answer, shows a summary to confirm, and builds the
// project from the answers. Ctrl-C, Ctrl-D or "n" stop it with nothing written.
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { CLI, tempDir } from "./helpers.js";

const hasScript = await execa("script", ["--version"], { reject: false }).then(
  (r) => r.exitCode === 0,
);

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * create-agent on a pseudo-terminal in `cwd`. Its stderr goes to a file outside `cwd` (read with `stderr()`),
 * so what it says there can be told apart from the terminal's screen, and `cwd` holds only what it wrote.
 */
async function terminal(cwd: string, args: string[]) {
  const errFile = join(await tempDir(), "stderr.txt");
  const command = `node ${[CLI, ...args].map(quote).join(" ")} 2>${quote(errFile)}`;
  const child = execa("script", ["-qec", command, "/dev/null"], {
    cwd,
    reject: false,
    env: { npm_config_user_agent: "", TERM: "dumb" },
  });
  let screen = "";
  child.stdout!.on("data", (chunk: Buffer) => (screen += chunk.toString()));
  let seen = 0;
  /** Waits for `prompt` to appear after what was already answered, then types `keys`. */
  const type = async (prompt: string, keys: string) => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const at = screen.indexOf(prompt, seen);
      if (at >= 0) {
        seen = at + prompt.length;
        break;
      }
      if (Date.now() > deadline) throw new Error(`no prompt "${prompt}"; screen:\n${screen}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    child.stdin!.write(keys);
  };
  return {
    type,
    answer: (prompt: string, text: string) => type(prompt, `${text}\n`),
    done: () => child,
    screen: () => screen.replaceAll("\r", ""),
    stderr: () => readFile(errFile, "utf8").catch(() => ""),
  };
}

/** Enter at every question up to `until` (exclusive), accepting the defaults. */
async function acceptDefaultsUntil(t: Awaited<ReturnType<typeof terminal>>, until: string) {
  const prompts = [
    "Project folder",
    "What does the agent do",
    "First capability",
    "What does summarize do",
    "Price per job in USDC",
    "Input fields",
    "Output fields",
    "Features",
    "Create it?",
  ];
  for (const prompt of prompts.slice(0, prompts.indexOf(until))) await t.answer(prompt, "");
}

describe.skipIf(!hasScript)("create-agent on a terminal", () => {
  it("asks for folder, agent, capability, price and fields, re-asks after a bad answer, and confirms", async () => {
    const cwd = await tempDir();
    await mkdir(join(cwd, "taken"));
    await writeFile(join(cwd, "taken/notes.txt"), "mine");
    await writeFile(join(cwd, "a-file"), "");
    const t = await terminal(cwd, ["--no-install", "--no-git"]);
    await t.answer("Project folder", "taken");
    await t.answer("Project folder", "a-file");
    await t.answer("Project folder", "shop");
    await t.answer("What does the agent do", "Translates product pages");
    await t.answer("First capability", "../x");
    await t.answer("First capability", "translate");
    await t.answer("What does translate do", "Translate a page");
    await t.answer("Price per job in USDC", "abc");
    await t.answer("Price per job in USDC", "0.05");
    await t.answer("Input fields", "text:string!, lang:str");
    await t.answer("Input fields", "text:string!, lang:string, tags:string[]");
    await t.answer("Output fields", "none");
    await t.answer("Output fields", "translation:string, notes:string?");
    await t.answer("Features", "mcp, solanna");
    await t.answer("Features", "solana, mcp");
    await t.answer("Create it? (Y/n)", "");
    const result = await t.done();
    const screen = t.screen();
    expect(result.exitCode, screen).toBe(0);
    // Why each answer was refused, then the same question again.
    expect(screen).toContain("taken is not empty (notes.txt): choose a new or empty folder");
    expect(screen).toContain("a-file exists and is a file, not a folder: choose another name");
    expect(screen).toContain('capability name "../x" contains');
    expect(screen).toContain('amount "abc" is not a decimal number');
    expect(screen).toContain('"lang:str": unknown type "str"; did you mean "string"?');
    expect(screen).toContain("a capability needs at least one output field");
    expect(screen).toContain(
      'unknown feature "solanna" (did you mean solana?): the features are solana, onchain, mcp, a2a, console, redis, queue, metrics, facilitator-auth',
    );
    expect(screen).toContain("Features (comma-separated, all or none) (mcp, a2a, console): ");
    // Defaults follow the capability: its description, the starter's fields.
    expect(screen).toContain("What does translate do (Run translate on a text): ");
    expect(screen).toContain("Input fields, or none (text:string!): ");
    expect(screen).toContain("Output fields (result:string): ");
    // The summary, before anything is written.
    expect(screen).toContain(
      [
        "About to create:",
        "  Folder:           ./shop (new folder)",
        "  Agent:            shop: Translates product pages",
        "  Capability:       translate, 0.05 USDC per job: Translate a page",
        "    inputs:         text (string, required), lang (string, optional), tags (string[], optional)",
        "    outputs:        translation (string), notes (string, optional)",
        "  Features:         solana, mcp",
        "  Package manager:  npm (--no-install: dependencies not installed)",
        "  Git:              no (--no-git)",
      ].join("\n"),
    );
    expect(screen).toContain('Created agent "shop" in ./shop (');
    expect(screen).toContain("  cd shop\n  npm install\n  npm run dev");
    expect(await t.stderr()).toBe("");

    const manifest = JSON.parse(await readFile(join(cwd, "shop/agent.json"), "utf8"));
    expect(manifest).toMatchObject({ name: "shop", description: "Translates product pages" });
    expect(Object.keys(manifest.capabilities)).toEqual(["translate"]);
    const translate = manifest.capabilities.translate;
    expect(translate.description).toBe("Translate a page");
    expect(translate.pricing.amount).toBe("0.05");
    expect(translate.input_schema).toEqual({
      text: { type: "string", required: true, minLength: 1, description: "The text to work on" },
      lang: { type: "string" },
      tags: { type: "array", items: { type: "string" } },
    });
    expect(translate.output_schema).toEqual({
      translation: { type: "string" },
      notes: { type: "string", required: false },
    });
    const handler = await readFile(join(cwd, "shop/src/capabilities/translate.ts"), "utf8");
    expect(handler).toContain("translation");
    const pkg = JSON.parse(await readFile(join(cwd, "shop/package.json"), "utf8"));
    expect(pkg.createAgent.features).toEqual(["solana", "mcp"]);
  }, 60_000);

  it("accepting every default makes the same project as --yes", async () => {
    const cwd = await tempDir();
    const t = await terminal(cwd, ["--no-install", "--no-git"]);
    await acceptDefaultsUntil(t, "Create it?");
    await t.answer("Create it? (Y/n)", "y");
    const result = await t.done();
    expect(result.exitCode, t.screen()).toBe(0);
    expect(t.screen()).toContain("What does summarize do (Summarize a text): ");
    expect(t.screen()).toContain("Input fields, or none (text:string!, max_words:integer): ");
    expect(t.screen()).toContain("Output fields (summary:string): ");

    const other = await tempDir();
    const yes = await execa("node", [CLI, "my-agent", "--yes", "--no-install", "--no-git"], {
      cwd: other,
      reject: false,
      all: true,
      stdin: "ignore",
    });
    expect(yes.exitCode, yes.all).toBe(0);
    for (const file of ["agent.json", "package.json", "src/runtime/features.ts"])
      expect(await readFile(join(cwd, "my-agent", file), "utf8")).toBe(
        await readFile(join(other, "my-agent", file), "utf8"),
      );
  }, 60_000);

  type Terminal = Awaited<ReturnType<typeof terminal>>;

  /**
   * A fresh folder, `create` in a terminal there and `answers` typed: the run must end cancelled (exit 130,
   * `cancelled` on stderr, nothing written). Returns the screen.
   */
  async function cancelledAfter(answers: (t: Terminal) => Promise<void>): Promise<string> {
    const cwd = await tempDir();
    const t = await terminal(cwd, ["--no-install", "--no-git"]);
    await answers(t);
    const result = await t.done();
    expect(result.exitCode, t.screen()).toBe(130);
    expect(await t.stderr()).toBe("cancelled\n");
    expect(await readdir(cwd)).toEqual([]);
    return t.screen();
  }

  it.each<[string, (t: Terminal) => Promise<void>, string[], string[]]>([
    [
      "Ctrl-C at a question prints `cancelled`, exits 130 and writes nothing",
      (t) => t.type("Project folder", "my-ag\x03"),
      [],
      ["AbortError"],
    ],
    [
      "Ctrl-D at a later question prints `cancelled`, exits 130 and writes nothing",
      async (t) => {
        await acceptDefaultsUntil(t, "Input fields");
        await t.type("Input fields", "\x04");
      },
      [],
      ["AbortError"],
    ],
    [
      '"n" to the summary cancels: exit 130, nothing written',
      async (t) => {
        await acceptDefaultsUntil(t, "Create it?");
        await t.answer("Create it? (Y/n)", "maybe");
        await t.answer("Create it? (Y/n)", "n");
      },
      ["please answer y (yes) or n (no)"],
      ["Created"],
    ],
  ])(
    "%s",
    async (_title, answers, shown, absent) => {
      const screen = await cancelledAfter(answers);
      for (const text of shown) expect(screen).toContain(text);
      for (const text of absent) expect(screen).not.toContain(text);
    },
    60_000,
  );
});
