import { lstat, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { formatProblem, ManifestError } from "../manifest/index.js";
import { pathInside, textOf } from "../write/apply.js";
import { keepMode } from "../write/atomic.js";
import { unifiedDiff } from "../upgrade/unified-diff.js";
import { behaviourNotes } from "../upgrade/behaviour-notes.js";
import type { FileChange, UpgradePlan } from "../upgrade/plan.js";
import { CliError } from "./errors.js";
import { projectCommands } from "../generate/package-manager.js";
import { projectRoot } from "./project-root.js";
import { hasUncommittedChanges } from "../scaffold/git.js";
import { STOP_SIGNALS } from "../upgrade/pristine.js";

export interface UpgradeOptions {
  cwd?: string;
  check?: boolean;
  dryRun?: boolean;
}

const LABELS: Record<FileChange["action"], string> = {
  update: "updated",
  merge: "merged",
  conflict: "CONFLICT",
  add: "added",
  remove: "removed",
  regenerate: "regenerated",
  vendor: "vendored",
  "modify-delete": "CONFLICT",
  "keep-deleted": "not restored",
};

/** Why a file is listed, where the action alone does not say it. */
function note(change: FileChange, plan: UpgradePlan): string {
  switch (change.action) {
    case "merge":
      return " (your edits kept)";
    case "conflict":
      return ` (${change.conflicts} conflict${change.conflicts === 1 ? "" : "s"}: resolve the <<<<<<< markers)`;
    case "modify-delete":
      return ` (modify/delete: ${droppedNote(change, plan)})`;
    case "keep-deleted":
      return ` (you deleted it; create-agent ${plan.to} changed it)`;
    case "regenerate":
      return change.after === undefined ? " (no longer generated: removed)" : "";
    case "vendor":
      if (change.path === "package-lock.json") return " (the vendored create-agent's integrity)";
      return change.after === undefined ? " (removed)" : "";
    default:
      return "";
  }
}

/** A file you edited that the new version no longer ships: your copy stays; where its code went, if anywhere. */
function droppedNote(change: FileChange, plan: UpgradePlan): string {
  const homes = change.movedTo ?? [];
  return (
    `you edited it, create-agent ${plan.to} no longer ships it; your copy is kept` +
    (homes.length > 0
      ? `; its code is now in ${homes.join(", ")}: move your edits there and delete this file`
      : `; no file of create-agent ${plan.to} holds a quarter of its code: move your edits where they belong and delete it`)
  );
}

/** Changes that write or remove something (modify-delete and keep-deleted leave the project as it is). */
const writes = (c: FileChange) => c.action !== "modify-delete" && c.action !== "keep-deleted";

/** Files that need you before the project works: conflict markers, or a dropped file you had edited. */
const needsYou = (c: FileChange) => c.action === "conflict" || c.action === "modify-delete";

/**
 * `create-agent upgrade [--check] [--dry-run]`: brings a project made by an older create-agent to this one
 * (see upgrade/plan.ts). Exit 0 when done (or nothing to do), 1 with conflicts (written, with markers;
 * or modify/delete: a file you edited that this create-agent no longer ships, kept as it is) or,
 * with --check, when the project is behind. --check and --dry-run write nothing (both still run the
 * project's vendored create-agent, without the environment's secrets: see upgrade/pristine.ts).
 */
export async function upgrade(options: UpgradeOptions, toolVersion: string): Promise<number> {
  const root = projectRoot(options.cwd);
  // Said every time, --check and --dry-run included: they write nothing, but they do run a program.
  process.stderr.write(
    "upgrade runs the create-agent that made this project (its tarball in vendor/) in a temporary folder, to see what it generated; it gets only PATH, HOME, the locale and the temporary-folder variables of your environment (no keys or tokens), and writes nothing in the project.\n",
  );
  const plan = await planOrExplain(root, toolVersion);
  if (options.check) return reportCheck(plan);
  if (plan.unresolved.length > 0)
    throw new CliError(
      `${unresolvedList(plan)}Resolve them (keep what you want between the markers, delete the marker lines) and run upgrade again; merging over them would nest the markers. Nothing was changed.`,
    );

  const out = process.stdout;
  const pending = plan.changes.filter(writes);
  if (pending.length === 0) {
    out.write(`Nothing to upgrade: this project already matches create-agent ${plan.to}.\n`);
    return 0;
  }
  const from =
    plan.from === plan.to ? `create-agent ${plan.from}` : `create-agent ${plan.from} -> ${plan.to}`;
  if (options.dryRun) {
    for (const change of pending) out.write(diffOf(change));
    out.write(`\nWould upgrade (${from}), writing nothing now:\n`);
  } else {
    if (await hasUncommittedChanges(root))
      process.stderr.write(
        "note: this project has uncommitted changes: `git diff` will show upgrade's changes mixed with them (commit first to see them alone)\n",
      );
    await apply(plan);
    out.write(`Upgraded (${from}):\n`);
  }
  for (const change of plan.changes) out.write(changeLine(change, plan));

  const pm = projectCommands(plan.packageManager);
  // package.json in conflict is no JSON until resolved: an install now would fail on it.
  const pjConflict = plan.changes.some((c) => c.path === "package.json" && c.action === "conflict");
  const install = pjConflict ? `resolve package.json's conflict, then ${pm.install}` : pm.install;
  printDependencies(plan, options.dryRun === true, install);
  if (reportConflicts(plan, options.dryRun === true)) return 1;
  if (!options.dryRun) out.write(`\nNext: ${pm.install}, then ${pm.typecheck} and ${pm.test}.\n`);
  return 0;
}

/** The upgrade plan; a project that cannot be upgraded is a CliError saying why (nothing was changed). */
async function planOrExplain(root: string, toolVersion: string): Promise<UpgradePlan> {
  const { planUpgrade } = await import("../upgrade/plan.js");
  try {
    return await planUpgrade(root, toolVersion);
  } catch (error) {
    if (error instanceof ManifestError)
      throw new CliError(
        `agent.json has problems; fix them before upgrading (nothing was changed):\n${error.problems.map((p) => `  ${formatProblem(p)}`).join("\n")}`,
      );
    throw new CliError(`cannot upgrade (nothing was changed): ${(error as Error).message}`);
  }
}

/** One line of the file list: "  merged       src/runtime/x.ts (your edits kept)", then its behaviour notes. */
function changeLine(change: FileChange, plan: UpgradePlan): string {
  const notes = behaviourNotes(change).map((n) => `               note: ${n}\n`);
  return `  ${LABELS[change.action].padEnd(12)} ${change.path}${note(change, plan)}\n${notes.join("")}`;
}

/** The files still holding an earlier upgrade's conflict markers, as a paragraph ending in a newline. */
const unresolvedList = (plan: UpgradePlan): string =>
  `${plan.unresolved.length} file${plan.unresolved.length === 1 ? "" : "s"} still hold${plan.unresolved.length === 1 ? "s" : ""} the conflict markers of an upgrade (<<<<<<< yours ... >>>>>>> create-agent):\n` +
  plan.unresolved.map((path) => `  ${path}\n`).join("");

/**
 * --check: 0 when up to date, else 1 with the files upgrading would change (src/generated/ left out),
 * or with the files an upgrade left in conflict and nobody resolved.
 */
function reportCheck(plan: UpgradePlan): number {
  if (plan.unresolved.length > 0) {
    process.stderr.write(
      `Unresolved upgrade: ${unresolvedList(plan)}Resolve them, then run the typecheck and tests.\n`,
    );
    return 1;
  }
  const runtimeChanges = plan.changes.filter(
    (c) => (writes(c) || c.action === "modify-delete") && c.action !== "regenerate",
  );
  if (runtimeChanges.length === 0 && plan.from === plan.to) {
    process.stdout.write(`Up to date: this project matches create-agent ${plan.to}.\n`);
    return 0;
  }
  const conflicts = plan.changes.filter(needsYou);
  process.stderr.write(
    `Behind: this project was made by create-agent ${plan.from}; upgrading to ${plan.to} would change ${runtimeChanges.length} file${runtimeChanges.length === 1 ? "" : "s"}${conflicts.length ? ` (${conflicts.length} with conflicts)` : ""}:\n` +
      runtimeChanges.map((c) => changeLine(c, plan)).join("") +
      "Run upgrade (without --check) to apply it; --dry-run shows the diffs.\n",
  );
  return 1;
}

/** The dependencies package.json's merge changed (or would), and the reinstall command. */
function printDependencies(plan: UpgradePlan, dryRun: boolean, install: string): void {
  if (plan.dependencyChanges.length === 0) return;
  const out = process.stdout;
  out.write(`\nDependencies${dryRun ? " that would change" : " changed"}:\n`);
  for (const d of plan.dependencyChanges)
    out.write(
      `  ${d.name.padEnd(28)} ${d.from ?? "(new)"} -> ${d.to ?? "(removed)"}   ${d.section}\n`,
    );
  for (const o of plan.overridden) out.write(`  note: you had changed ${o}\n`);
  if (!dryRun) out.write(`Reinstall: ${install}\n`);
}

/** Lists the files that need you (conflict markers, modify/delete) on stderr; true when there are any. */
function reportConflicts(plan: UpgradePlan, dryRun: boolean): boolean {
  const conflicts = plan.changes.filter(needsYou);
  if (conflicts.length === 0) return false;
  const marked = conflicts.filter((c) => c.action === "conflict");
  const dropped = conflicts.filter((c) => c.action === "modify-delete");
  if (marked.length > 0)
    process.stderr.write(
      `\n${marked.length} file${marked.length === 1 ? "" : "s"} with conflicts${dryRun ? " would be written" : ""} (your version and create-agent's, between <<<<<<< and >>>>>>>):\n` +
        marked.map((c) => `  ${c.path}\n`).join(""),
    );
  if (dropped.length > 0)
    process.stderr.write(
      `\n${dropped.length} file${dropped.length === 1 ? "" : "s"} in conflict (modify/delete): you edited ${dropped.length === 1 ? "it" : "them"}, create-agent ${plan.to} no longer ships ${dropped.length === 1 ? "it" : "them"}:\n` +
        dropped.map((c) => `  ${c.path} (${droppedNote(c, plan)})\n`).join(""),
    );
  if (!dryRun) process.stderr.write("Resolve them, then run the typecheck and tests.\n");
  return true;
}

/**
 * Writes the plan, as nearly all-or-nothing as a file system allows: every new content is first written
 * to a temp file beside its target (with the target's permissions); only when all of them are written
 * are they renamed into place, then removals, then package.json, last, so an interrupted upgrade can be
 * run again. A failure while staging (a read-only folder, a full disk, a symbolic link where a file
 * goes, Ctrl-C) removes the temp files and leaves the project as it was; Ctrl-C while renaming waits
 * for the renames (a moment) and then stops.
 */
async function apply(plan: UpgradePlan): Promise<void> {
  const changes = plan.changes.filter(writes);
  const staged: Array<{ temp: string; target: string }> = [];
  const folders: string[] = []; // made for new files: gone again if the upgrade stops
  const signals = holdStopSignals();
  try {
    for (const change of changes) {
      if (change.after === undefined) continue;
      const target = pathInside(plan.root, change.path);
      staged.push({ temp: `${target}.${process.pid}.upgrade.tmp`, target });
      await stage(change, target, staged.at(-1)!.temp, folders);
      if (signals.caught) throw new Error(`${signals.caught} received`);
    }
  } catch (error) {
    await Promise.all(staged.map(({ temp }) => rm(temp, { force: true })));
    for (const folder of folders.reverse()) await rm(folder, { recursive: true, force: true });
    if (signals.caught)
      process.stderr.write(`upgrade stopped (${signals.caught}): nothing was changed\n`);
    signals.release();
    throw new CliError(
      `cannot write the upgrade (nothing was changed): ${(error as Error).message}`,
    );
  }
  const manifestFile = pathInside(plan.root, "package.json");
  for (const { temp, target } of staged) if (target !== manifestFile) await rename(temp, target);
  for (const change of changes)
    if (change.after === undefined) await rm(pathInside(plan.root, change.path), { force: true });
  for (const { temp, target } of staged) if (target === manifestFile) await rename(temp, target);
  if (signals.caught)
    process.stderr.write(
      `${signals.caught} received while the upgrade was being put in place: it is complete (git status shows it)\n`,
    );
  signals.release();
}

/** One change's new content in `temp`, beside `target`; what would make its rename fail later is refused now. */
async function stage(
  change: FileChange,
  target: string,
  temp: string,
  folders: string[],
): Promise<void> {
  const existing = await lstat(target).catch(() => undefined);
  if (existing?.isDirectory()) throw new Error(`${change.path} is a folder, where a file goes`);
  if (existing?.isSymbolicLink())
    throw new Error(
      `${change.path} is a symbolic link, which upgrade would replace by a file: make it a file (or move it aside) and run upgrade again`,
    );
  const made = await mkdir(dirname(target), { recursive: true });
  if (made) folders.push(made);
  await writeFile(temp, change.after!);
  await keepMode(temp, existing);
}

/** SIGINT/SIGTERM/SIGHUP noted, not acted on, until released (then the process stops as it would have). */
function holdStopSignals(): { readonly caught: string | undefined; release(): void } {
  let caught: NodeJS.Signals | undefined;
  const note = (signal: NodeJS.Signals) => (caught ??= signal);
  for (const signal of STOP_SIGNALS) process.on(signal, note);
  return {
    get caught() {
      return caught;
    },
    release() {
      for (const signal of STOP_SIGNALS) process.off(signal, note);
      if (caught) process.kill(process.pid, caught);
    },
  };
}

function diffOf(change: FileChange): string {
  const isBinary = change.path.endsWith(".tgz");
  if (isBinary)
    return `Binary file ${change.path} ${change.after === undefined ? "removed" : change.before ? "changed" : "added"}\n`;
  const before = change.before?.toString("utf8");
  const after = change.after === undefined ? undefined : textOf(change.after);
  return unifiedDiff(change.path, before, after);
}
