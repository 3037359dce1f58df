// What a new user hit on first contact, at the CLI level: scaffolding into create-agent's own folder,
// script arguments as pnpm passes them, a busy port under `npm run dev`, messages naming runnable commands.
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { devPort, ensurePortFree } from "../../src/cli/dev.js";
import { CliError } from "../../src/cli/errors.js";
import { insideToolHome, TOOL_ROOT } from "../../src/scaffold/tool-home.js";
import { cli, scaffold, tempDir } from "./helpers.js";

describe("a project inside create-agent's own folder", () => {
  it("is refused with a message saying why and what to do, and nothing is written", async () => {
    const target = join(TOOL_ROOT, ".tmp", `inside-${process.pid}-${Date.now()}`);
    const result = await cli([target, "--yes", "--no-install", "--no-git"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("inside create-agent's own folder");
    expect(result.stderr).toContain("no git repository of its own");
    expect(result.stderr).toContain("--inside-tool-repo");
    expect(existsSync(target)).toBe(false);
  });

  it("insideToolHome follows symlinks and is false for a sibling folder", async () => {
    expect(insideToolHome(join(TOOL_ROOT, "some", "deeper", "project"))).toBe(true);
    expect(insideToolHome(TOOL_ROOT)).toBe(true);
    const outside = await tempDir();
    expect(insideToolHome(join(outside, "my-agent"))).toBe(false);
    expect(insideToolHome(join(TOOL_ROOT, "..", "my-agent"))).toBe(false);
  });
});

describe("script arguments as package managers pass them", () => {
  it("`create-agent generate -- --check` (pnpm passes the --) checks instead of failing", async () => {
    const dir = await scaffold();
    const result = await cli(["generate", "--", "--check"], dir);
    expect(result.all).not.toContain("too many arguments");
    expect(result.exitCode, result.all).toBe(0);
    expect(result.stdout).toContain("up to date");
  });

  it("messages name the project's scripts, never a bare create-agent command", async () => {
    const dir = await scaffold();
    const result = await cli(["add-capability", "summarize", "--cwd", dir]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("`npm run generate`");
    expect(result.stderr).not.toMatch(/`(npx )?create-agent /);
  });
});

describe("`npm run dev` with its port taken", () => {
  const servers: ReturnType<typeof createServer>[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) s.close();
  });

  it("ensurePortFree refuses a busy port, naming it and how to set PORT", async () => {
    const busy = createServer().listen(0);
    servers.push(busy);
    await once(busy, "listening");
    const port = String((busy.address() as { port: number }).port);
    const refused = await ensurePortFree(port).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(CliError);
    expect(String(refused)).toContain(`port ${port} is busy`);
    expect(String(refused)).toContain("PORT=");
    busy.close();
    await once(busy, "close");
    await expect(ensurePortFree(port)).resolves.toBeUndefined();
  });

  it("devPort reads PORT from the environment, else .env, else 3000", async () => {
    const dir = await tempDir();
    expect(devPort(dir, {})).toBe("3000");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, ".env"), "# settings\nPORT = 4123\n");
    expect(devPort(dir, {})).toBe("4123");
    expect(devPort(dir, { PORT: "5000" })).toBe("5000");
  });
});
