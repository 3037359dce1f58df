/**
 * What `create` says at its end: the next steps of a finished project, or what a stopped one did and did
 * not do, with the commands that finish it.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { scriptCommand } from "../generate/package-manager.js";
import type { PackageManager } from "../scaffold/install.js";
import { displayPath, shownPath } from "../scaffold/stage.js";
import { shellQuote } from "../shell-quote.js";
import { stoppedExitCode } from "../stop-signals.js";

/**
 * A create stopped (Ctrl-C, SIGTERM) before its files were moved into place: the staging folder is gone
 * and nothing was written. The exit code of the signal.
 */
export function stoppedBeforeWriting(target: string, signal: NodeJS.Signals): number {
  process.stderr.write(
    `\nStopped (${signal}) before the project was written: nothing was created, ${shownPath(target)} is as it was.\n`,
  );
  return stoppedExitCode(signal);
}

/** What a stopped create did and did not do, and the commands that finish it; the exit code of the signal. */
export function stoppedBeforeDone(
  target: string,
  pm: PackageManager,
  where: string,
  signal: NodeJS.Signals,
  done: { installed: boolean; git: boolean },
): number {
  const installed = done.installed;
  const git = !done.git || existsSync(join(target, ".git")); // none asked for (--no-git): none missing
  const missing = [
    ...(installed ? [] : ["its dependencies (node_modules)"]),
    ...(git ? [] : ["its git repository"]),
  ];
  const steps = [
    cdCommand(target),
    ...(installed ? [] : [`${pm} install`]),
    ...(git ? [] : ['git init && git add -A && git commit -m "Initial commit from create-agent"']),
  ].filter(Boolean);
  if (missing.length === 0) printNextSteps(target, pm, true);
  else
    process.stderr.write(
      `\nStopped (${signal}): the project's files are all in ${where}, but ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not there yet (the folder now holds an agent project: create will not write into it again). To finish it:\n${steps.map((s) => `  ${s}`).join("\n")}\n`,
    );
  return stoppedExitCode(signal);
}

/** `cd <project>` as the user would type it from here; empty when the project is the current folder. */
export function cdCommand(target: string): string {
  if (shownPath(target) === ".") return "";
  const path = displayPath(target);
  return `cd ${shellQuote(path.startsWith("-") ? `./${path}` : path)}`;
}

export function printNextSteps(target: string, pm: PackageManager, installed: boolean): void {
  const steps = [cdCommand(target)].filter(Boolean);
  if (!installed) steps.push(`${pm} install`);
  steps.push(`${scriptCommand(pm, "dev")}        # dev mode: no payment needed`);
  process.stdout.write(
    [
      "",
      "Next steps:",
      ...steps.map((s) => `  ${s}`),
      "",
      "Then try it:",
      "  curl localhost:3000/about",
      "Write your logic in src/capabilities/, and read the project's README for payments and going live.",
      "",
    ].join("\n"),
  );
}
