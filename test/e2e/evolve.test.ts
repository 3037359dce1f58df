// A project evolving over time, driven by the CLI vendored inside it (as `npm run generate` would):
// capabilities added, schemas edited, and the dev loop that regenerates on save. Each test works on its own
// copy of the shared installed project, with node_modules linked rather than installed again.
import { readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, inject, it } from "vitest";
import { copyProject } from "./helpers.js";

const shared = inject("projectDir");
const copies: string[] = [];
afterEach(async () => {
  await Promise.all(copies.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function copyShared(): Promise<string> {
  const dir = await copyProject(shared, "create-agent-evolve-");
  copies.push(dirname(dir));
  return dir;
}

/** The project's own create-agent (installed from vendor/), as `npm run generate` runs it. */
function projectCli(dir: string, args: string[]) {
  return execa(join(dir, "node_modules/.bin/create-agent"), args, {
    cwd: dir,
    reject: false,
    all: true,
  });
}

function typecheck(dir: string) {
  // `npm run typecheck` (tsc -b), without npm's banner.
  return execa("npx", ["tsc", "-b", "--pretty", "false"], {
    cwd: dir,
    reject: false,
    all: true,
  });
}

async function editManifest(dir: string, change: (manifest: any) => void) {
  const manifest = JSON.parse(await readFile(join(dir, "agent.json"), "utf8"));
  change(manifest);
  await writeFile(join(dir, "agent.json"), `${JSON.stringify(manifest, null, 2)}\n`);
}

describe("evolving a project", () => {
  it("add-capability, then typecheck and the project's tests pass with the new capability", async () => {
    const dir = await copyShared();
    const add = await projectCli(dir, [
      "add-capability",
      "translate",
      "--price",
      "0.05",
      "--input",
      "text:string!",
      "--input",
      "target:string!",
      "--output",
      "translation:string",
    ]);
    expect(add.exitCode, add.all).toBe(0);
    const checked = await typecheck(dir);
    expect(checked.exitCode, checked.all).toBe(0);
    const tests = await execa("npx", ["vitest", "run", "--reporter", "verbose"], {
      cwd: dir,
      reject: false,
      all: true,
      env: { NO_COLOR: "1" },
    });
    expect(tests.exitCode, tests.all).toBe(0);
    expect(tests.all).toContain(
      "capability translate > runs a job and returns an output that matches the output_schema",
    );
  });

  describe("a schema edit makes typecheck fail at the exact handler line, with a readable type name", () => {
    const handler = [
      'import type { SummarizeInput, SummarizeOutput } from "../generated/types.js";',
      'import type { HandlerContext } from "../runtime/types.js";',
      "",
      "export default async function summarize(input: SummarizeInput, _ctx: HandlerContext): Promise<SummarizeOutput> {",
      "  const words = input.text.split(/\\s+/).slice(0, input.max_words);",
      '  return { summary: words.join(" ") };',
      "}",
      "",
    ].join("\n");

    it.each([
      [
        "an input field renamed",
        (m: any) => {
          const { text, ...rest } = m.capabilities.summarize.input_schema;
          m.capabilities.summarize.input_schema = { content: text, ...rest };
        },
        5,
        "Property 'text' does not exist on type 'SummarizeInput'",
      ],
      [
        "an output type changed",
        (m: any) => {
          m.capabilities.summarize.output_schema.summary.type = "integer";
        },
        6,
        "Type 'string' is not assignable to type 'number'",
      ],
      [
        "a required output field added",
        (m: any) => {
          m.capabilities.summarize.output_schema.word_count = { type: "integer" };
        },
        6,
        "Property 'word_count' is missing in type '{ summary: string; }' but required in type 'SummarizeOutput'",
      ],
    ])("%s", async (_name, change, line, message) => {
      const dir = await copyShared();
      await writeFile(join(dir, "src/capabilities/summarize.ts"), handler);
      expect((await typecheck(dir)).exitCode).toBe(0);
      await editManifest(dir, change);
      const generated = await projectCli(dir, ["generate"]);
      expect(generated.exitCode, generated.all).toBe(0);
      const checked = await typecheck(dir);
      expect(checked.exitCode, "tsc -b exits 1 on type errors").toBe(1);
      expect(checked.stdout).toContain(`src/capabilities/summarize.ts(${line},`);
      expect(checked.stdout).toContain(message);
      // The handler is the only place that fails: the generated code itself stays consistent.
      expect(checked.stdout).not.toContain("src/generated/");
    });
  });

  it("typecheck checks src/runtime only when it changes: the scaffold built its declarations, and an edit there is checked and reaches the handlers", async () => {
    const dir = await copyShared();
    const first = await execa("npx", ["tsc", "-b", "--verbose", "--pretty", "false"], {
      cwd: dir,
      reject: false,
      all: true,
    });
    expect(first.exitCode, first.all).toBe(0);
    expect(first.all).toContain("Project 'src/runtime/tsconfig.json' is up to date");
    expect(first.all).toContain("Building project");

    const file = join(dir, "src/runtime/jobs/deadline.ts");
    const pristine = await readFile(file, "utf8");
    await writeFile(file, `${pristine}export const wrong: number = "not a number";\n`);
    const broken = await typecheck(dir);
    expect(broken.exitCode, broken.all).not.toBe(0);
    expect(broken.all).toMatch(/src\/runtime\/jobs\/deadline\.ts\(\d+,\d+\): error TS2322/);
    await writeFile(file, pristine);
    expect((await typecheck(dir)).exitCode).toBe(0);

    // A runtime type the handlers import, no longer exported: the handler's import fails.
    const types = join(dir, "src/runtime/types.ts");
    const typesText = await readFile(types, "utf8");
    await writeFile(types, typesText.replace("export interface HandlerContext", "interface HandlerContext"));
    const unexported = await typecheck(dir);
    expect(unexported.exitCode, unexported.all).not.toBe(0);
    expect(unexported.all).toMatch(/src\/capabilities\/summarize\.ts\(\d+,\d+\): error TS\d+:.*HandlerContext/);
    await writeFile(types, typesText);
    expect((await typecheck(dir)).exitCode).toBe(0);
  });

  it("`create-agent dev` (npm run dev) serves in dev mode and picks up a new capability on save", async () => {
    const dir = await copyShared();
    const pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
    expect(pkg.scripts.dev).toBe("create-agent dev");
    const child = execa(join(dir, "node_modules/.bin/create-agent"), ["dev"], {
      cwd: dir,
      env: { PORT: "0", NO_COLOR: "1" },
      reject: false,
      all: true,
      forceKillAfterDelay: 3000,
    });
    let output = "";
    child.all!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    try {
      const first = await until(
        () => lastUrl(output),
        30_000,
        () => output,
      );
      const about = (await (await fetch(`${first}/about`)).json()) as any;
      expect(Object.keys(about.capabilities)).toEqual(["summarize", "classify-review"]);
      expect(output).toMatch(/payment verification is bypassed/);

      await editManifest(dir, (m) => {
        m.capabilities.shout = {
          pricing: { model: "per_job", amount: "0.02", currency: "USDC" },
          input_schema: { text: { type: "string", required: true } },
          output_schema: { loud: { type: "string" } },
        };
      });
      const names = await until(
        async () => {
          const url = lastUrl(output);
          if (!url || url === first) return undefined;
          const body = await fetch(`${url}/about`).then(
            (r) => r.json() as Promise<any>,
            () => undefined,
          );
          return body && Object.keys(body.capabilities).includes("shout")
            ? Object.keys(body.capabilities)
            : undefined;
        },
        30_000,
        () => output,
      );
      expect(names).toEqual(["summarize", "classify-review", "shout"]);
      expect(output).toContain("src/capabilities/shout.ts");
    } finally {
      child.kill("SIGINT");
      const result = await child;
      expect(result.exitCode, output).toBe(0);
      expect(output).toContain("Stopped watching.");
    }
  });
});

/** The URL of the most recent "listening on" line (tsx restarts the server on a new port when PORT=0). */
function lastUrl(output: string): string | undefined {
  const matches = [...output.matchAll(/listening on http:\/\/localhost:(\d+)/g)];
  const port = matches.at(-1)?.[1];
  return port ? `http://127.0.0.1:${port}` : undefined;
}

async function until<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  context: () => string,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end)
      throw new Error(`timed out after ${timeoutMs} ms; output so far:\n${context()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
