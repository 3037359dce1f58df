// The interactive path: on a real terminal (a pseudo-terminal from util-linux `script`), without --yes,
// create-agent asks its questions, re-asks after a bad answer, and builds the project from the answers.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { CLI, tempDir } from "./helpers.js";

const hasScript = await execa("script", ["--version"], { reject: false }).then(
  (r) => r.exitCode === 0,
);

describe.skipIf(!hasScript)("create-agent on a terminal", () => {
  it("asks for the folder, description, first capability and price, re-asking after a bad answer", async () => {
    const cwd = await tempDir();
    const child = execa("script", ["-qec", `node ${CLI} --no-install --no-git`, "/dev/null"], {
      cwd,
      reject: false,
      env: { npm_config_user_agent: "", TERM: "dumb" },
    });
    let screen = "";
    child.stdout!.on("data", (chunk: Buffer) => (screen += chunk.toString()));
    /** Waits for `prompt` to appear after what was already answered, then types `answer`. */
    let seen = 0;
    const answer = async (prompt: string, text: string) => {
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
      child.stdin!.write(`${text}\n`);
    };
    await answer("Project folder", "shop");
    await answer("What does the agent do", "Translates product pages");
    await answer("First capability", "../x");
    await answer("First capability", "translate");
    await answer("Price per job in USDC", "abc");
    await answer("Price per job in USDC", "0.05");
    const result = await child;
    expect(result.exitCode, screen).toBe(0);
    expect(screen).toContain('capability name "../x" contains');
    expect(screen).toContain('amount "abc" is not a decimal number');
    const manifest = JSON.parse(await readFile(join(cwd, "shop/agent.json"), "utf8"));
    expect(manifest).toMatchObject({ name: "shop", description: "Translates product pages" });
    expect(Object.keys(manifest.capabilities)).toEqual(["translate"]);
    expect(manifest.capabilities.translate.pricing.amount).toBe("0.05");
  });
});
