/**
 * Which of your own files import what `remove` deletes: a removed feature's packages (kept in package.json:
 * a pin equal to the feature's is otherwise taken for create-agent's and dropped), and its runtime folder
 * (remove refuses: your code would no longer typecheck).
 */
import { readdir, readFile } from "node:fs/promises";
import { posix } from "node:path";
import { CliError } from "./errors.js";

const CODE = /\.(?:[cm]?ts|tsx|[cm]?js|jsx)$/;

/** Folders no code of yours is in: installed packages, git's store, the build output (top level). */
const NOT_YOURS = (path: string, name: string) =>
  name === "node_modules" || name === ".git" || path === "dist";

/**
 * The project's code files, wherever they are (src/, test/, scripts/, a root-level config...): every
 * folder but those NOT_YOURS and `skip/`, pruned while walking (node_modules is never listed), links
 * not followed. Project-relative POSIX paths, sorted.
 */
async function codeFiles(root: string, skip: string): Promise<string[]> {
  const files: string[] = [];
  const walk = async (folder: string): Promise<void> => {
    const entries = await readdir(folder === "" ? root : `${root}/${folder}`, {
      withFileTypes: true,
    });
    for (const entry of entries) {
      const path = folder === "" ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory() && !NOT_YOURS(path, entry.name) && path !== skip) await walk(path);
      else if (entry.isFile() && CODE.test(entry.name)) files.push(path);
    }
  };
  await walk("");
  return files.sort();
}

/** package name -> the first project file (not in `skip/`) that imports it or a subpath of it. */
export async function importersOf(
  root: string,
  names: string[],
  skip: string,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (names.length === 0) return found;
  for (const path of await codeFiles(root, skip)) {
    const text = await readFile(`${root}/${path}`, "utf8");
    for (const name of names)
      if (!found.has(name) && importsPackage(text, name)) found.set(name, path);
  }
  return found;
}

/**
 * `file imports "specifier"` for each relative import, in a project file outside `folder` and not in
 * `rewritten` (the files remove writes anew: features.ts drops its own imports of the folder), that
 * points into `folder` (project-relative, POSIX).
 */
export async function folderImporters(
  root: string,
  folder: string,
  rewritten: ReadonlySet<string>,
): Promise<string[]> {
  const found: string[] = [];
  for (const path of await codeFiles(root, folder)) {
    if (rewritten.has(path)) continue;
    const text = await readFile(`${root}/${path}`, "utf8");
    for (const [, specifier] of text.matchAll(
      new RegExp(`${IMPORT.source}(\\.\\.?/[^"']*)["']`, "g"),
    )) {
      const target = posix.join(posix.dirname(path), specifier!);
      if (target === folder || target.startsWith(`${folder}/`))
        found.push(`${path} imports "${specifier}"`);
    }
  }
  return found;
}

/**
 * remove: refused (CliError, nothing changed) while files it does not rewrite import from the folder it
 * deletes, since they would no longer typecheck; with --force, those files and imports, to be reported.
 */
export async function checkFolderImporters(
  root: string,
  plan: { removeFolder?: string; feature: { name: string }; writes: Map<string, string> },
  force: boolean,
): Promise<string[]> {
  const folder = plan.removeFolder!;
  const importers = await folderImporters(root, folder, new Set(plan.writes.keys()));
  if (importers.length > 0 && !force)
    throw new CliError(
      `your code imports from ${folder}/, which remove ${plan.feature.name} deletes: ${importers.join("; ")} (nothing was changed). ` +
        `Remove those imports first (copy what you need out of the folder), then run this again; or pass --force to delete the folder anyway (those files then fail to typecheck)`,
    );
  return importers;
}

/** What comes before an import's quoted specifier: `from`, `import(`, `require(`, a bare `import`. */
const IMPORT = /(?:from\s*|import\s*\(\s*|require\s*\(\s*|import\s+)["']/;

/** `from "name"`, `from "name/sub"`, `import("name")`, `require("name")`, with either quote. */
function importsPackage(text: string, name: string): boolean {
  const quoted = name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  return new RegExp(`${IMPORT.source}${quoted}(?:/[^"']*)?["']`).test(text);
}
