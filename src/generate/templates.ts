import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import Handlebars from "handlebars";

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
    const template = Handlebars.compile(source, { noEscape: true, strict: true });
    return { path, render: (data: object) => template(data) };
  });
}

/** One template file, rendered. */
export function renderTemplate(file: string, data: object): string {
  const source = readFileSync(join(TEMPLATES_DIR, file), "utf8");
  return Handlebars.compile(source, { noEscape: true, strict: true })(data);
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const full = join(dir, entry.name);
      return entry.isDirectory() ? listFiles(full) : [full];
    });
}
