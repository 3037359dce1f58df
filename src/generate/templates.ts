import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { compileTemplate } from "./template-render.js";

type Template = (data: object) => string;

/** Compiled templates by source text, so each is compiled once per process. */
const compiled = new Map<string, Template>();

function compile(source: string, name: string): Template {
  let template = compiled.get(source);
  if (template === undefined) {
    template = compileTemplate(source, name);
    compiled.set(source, template);
  }
  return template;
}

/** templates/ in this package: two levels above this module both in src/generate and in dist/generate. */
export const TEMPLATES_DIR = fileURLToPath(new URL("../../templates/", import.meta.url));

export interface TemplateFile {
  /** Path in the generated project: `.hbs` dropped, a leading `_` turned into `.` (npm drops dotfiles). */
  path: string;
  /** Renders the file for the given data (a verbatim copy for non-.hbs files). */
  render(data: object): string;
}

/** Every file under templates/<folder>, in a stable order. */
export function templateFolder(folder: string): TemplateFile[] {
  const root = join(TEMPLATES_DIR, folder);
  return listFiles(root).map((file) => {
    const source = readFileSync(file, "utf8");
    const rel = relative(root, file).split(sep);
    const name = rel.pop()!.replace(/^_/, ".");
    const path = [...rel, name.replace(/\.hbs$/, "")].join("/");
    if (!name.endsWith(".hbs")) return { path, render: () => source };
    return { path, render: (data: object) => compile(source, path)(data) };
  });
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const full = join(dir, entry.name);
      return entry.isDirectory() ? listFiles(full) : [full];
    });
}
