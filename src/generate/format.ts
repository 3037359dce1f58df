import { format } from "prettier";

/**
 * Formats generated text with fixed options. Never reads a prettier config from disk, so the output is the
 * same byte for byte on every machine, whatever the user's project or home directory contains. `generate`
 * writes its files already formatted (print/) and loads this module only for text print/ cannot lay out
 * exactly (wide characters); the client generator formats with it.
 */
const OPTIONS = {
  printWidth: 100,
  tabWidth: 2,
  useTabs: false,
  semi: true,
  singleQuote: false,
  trailingComma: "all",
  endOfLine: "lf",
} as const;

const PARSERS: Record<string, string> = { ts: "typescript", json: "json", md: "markdown" };

export async function formatFile(path: string, contents: string): Promise<string> {
  const ext = path.slice(path.lastIndexOf(".") + 1);
  const parser = PARSERS[ext];
  if (!parser) return contents;
  return format(contents, { ...OPTIONS, parser });
}
