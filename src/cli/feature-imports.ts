/**
 * Which of a removed feature's packages your own code imports: `remove` keeps those in package.json
 * (a pin equal to the feature's is otherwise taken for create-agent's and dropped).
 */
import { readFile } from "node:fs/promises";
import { listFiles } from "../write/apply.js";

const CODE = /\.(?:[cm]?ts|tsx|[cm]?js|jsx)$/;

/** package name -> the first project file (src/, test/; not `skip/`) that imports it or a subpath of it. */
export async function importersOf(
  root: string,
  names: string[],
  skip: string,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (names.length === 0) return found;
  const files = [...(await listFiles(root, "src")), ...(await listFiles(root, "test"))];
  for (const path of files) {
    if (!CODE.test(path) || path.startsWith(`${skip}/`)) continue;
    const text = await readFile(`${root}/${path}`, "utf8");
    for (const name of names)
      if (!found.has(name) && importsPackage(text, name)) found.set(name, path);
  }
  return found;
}

/** `from "name"`, `from "name/sub"`, `import("name")`, `require("name")`, with either quote. */
function importsPackage(text: string, name: string): boolean {
  const quoted = name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  return new RegExp(
    `(?:from\\s*|import\\s*\\(\\s*|require\\s*\\(\\s*|import\\s+)["']${quoted}(?:/[^"']*)?["']`,
  ).test(text);
}
