/**
 * Where the code of a file a newer create-agent no longer ships went, for a modify/delete conflict's
 * message. The rule, kept simple so a user can check it: take the lines of code of the version the old
 * create-agent wrote (trimmed; blank lines, comments, imports and lines under 12 characters left out,
 * each counted once); a file of the new version is a new home when it holds at least a quarter of them.
 * At most three are named, those holding the most first. No file passes: none is named.
 */

const MIN_LINE_LENGTH = 12;
const MIN_SHARE = 0.25;
const MAX_HOMES = 3;

/** The lines that carry code: what a move keeps, unlike blank lines, braces, comments and imports. */
function codeLines(text: string): Set<string> {
  const lines = new Set<string>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.length < MIN_LINE_LENGTH) continue;
    if (/^(\/\/|\/\*|\*|#|import\s|export\s+\{[^}]*\}\s+from\s)/.test(line)) continue;
    lines.add(line);
  }
  return lines;
}

/** The files of `files` (path, text) that now hold the code of `old`, best first (see above). */
export function newHomes(old: string, files: Iterable<[string, string]>): string[] {
  const wanted = codeLines(old);
  if (wanted.size === 0) return [];
  const needed = Math.max(1, Math.ceil(wanted.size * MIN_SHARE));
  const found: Array<{ path: string; shared: number }> = [];
  for (const [path, text] of files) {
    let shared = 0;
    for (const line of codeLines(text)) if (wanted.has(line)) shared++;
    if (shared >= needed) found.push({ path, shared });
  }
  found.sort((a, b) => b.shared - a.shared || (a.path < b.path ? -1 : 1));
  return found.slice(0, MAX_HOMES).map((f) => f.path);
}
