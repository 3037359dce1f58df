/**
 * Which of your own files import what `remove` deletes: a removed feature's packages (kept in package.json:
 * a pin equal to the feature's is otherwise taken for create-agent's and dropped), and its runtime folder
 * (remove refuses: your code would no longer typecheck).
 */
import { readFile } from "node:fs/promises";
import { posix } from "node:path";
import { listFiles } from "../write/apply.js";
import { CliError } from "./errors.js";

const CODE = /\.(?:[cm]?ts|tsx|[cm]?js|jsx)$/;

/** The project's code files (src/, test/), but those in `skip/`. */
async function codeFiles(root: string, skip: string): Promise<string[]> {
  const files = [...(await listFiles(root, "src")), ...(await listFiles(root, "test"))];
  return files.filter((path) => CODE.test(path) && !path.startsWith(`${skip}/`));
}

/** package name -> the first project file (src/, test/; not `skip/`) that imports it or a subpath of it. */
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
