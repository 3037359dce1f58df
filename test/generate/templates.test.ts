// Template files are copied without going through prettier (for speed), so they must already be formatted
// exactly as the generator would format them; this keeps generated projects uniformly formatted.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { formatFile } from "../../src/generate/format.js";
import { templateFolder } from "../../src/generate/templates.js";

describe.each(["project", "runtime"])("templates/%s", (folder) => {
  const formattable = templateFolder(folder).filter((t) => /\.(ts|json)$/.test(t.path));
  it.each(formattable.map((t) => t.path))("%s is already formatted", async (path) => {
    const source = readFileSync(
      new URL(`../../templates/${folder}/${path}`, import.meta.url),
      "utf8",
    );
    expect(source).toBe(await formatFile(path, source));
  });
});
