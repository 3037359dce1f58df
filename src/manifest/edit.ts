import { createRequire } from "node:module";
import type { FormattingOptions } from "jsonc-parser";
import type { CapabilityManifest } from "./model.js";

/** jsonc-parser (CommonJS), required on first use: loading the manifest module does not load it. */
function jsonc(): typeof import("jsonc-parser") {
  return createRequire(import.meta.url)("jsonc-parser") as typeof import("jsonc-parser");
}

/**
 * Text edits of agent.json that keep everything else byte for byte: the user's indentation, key order,
 * line breaks and spacing. Only the edited capability's text changes.
 */

/** Adds a capability at the end of `capabilities`, indented like the rest of the file. */
export function addCapabilityToText(text: string, name: string, entry: CapabilityManifest): string {
  const { applyEdits, modify } = jsonc();
  return applyEdits(
    text,
    modify(text, ["capabilities", name], entry, { formattingOptions: detectFormatting(text) }),
  );
}

/** Removes a capability (and the comma that separated it). */
export function removeCapabilityFromText(text: string, name: string): string {
  const { applyEdits, modify } = jsonc();
  return applyEdits(
    text,
    modify(text, ["capabilities", name], undefined, { formattingOptions: detectFormatting(text) }),
  );
}

/** The file's own indentation unit and line ending, so inserted text matches it. */
function detectFormatting(text: string): FormattingOptions {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const indent = /\n([ \t]+)"/.exec(text)?.[1] ?? "  ";
  return indent.startsWith("\t")
    ? { insertSpaces: false, tabSize: 1, eol }
    : { insertSpaces: true, tabSize: indent.length, eol };
}
