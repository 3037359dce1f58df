/** "Did you mean ...?" suggestions for misspelled keys, keywords, types and formats. */

/** Optimal-string-alignment distance: Levenshtein plus adjacent transpositions ("requried" -> "required" = 1). */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const prev = rows[i - 1] ?? [];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (rows[i - 2]?.[j - 2] ?? 0) + 1);
      }
      row.push(best);
    }
    rows.push(row);
  }
  return rows[a.length]?.[b.length] ?? Math.max(a.length, b.length);
}

/**
 * The closest candidate, or undefined. Tries, in order: known aliases ("int" -> "integer"), a case-insensitive
 * match, an unambiguous prefix ("str" -> "string"), then edit distance <= 2 (<= 1 for very short words, where
 * 2 edits would turn almost anything into anything).
 */
export function suggest(
  input: string,
  candidates: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): string | undefined {
  const lower = input.toLowerCase();
  const alias = Object.hasOwn(aliases, lower) ? aliases[lower] : undefined;
  if (alias !== undefined) return alias;
  const caseless = candidates.find((c) => c.toLowerCase() === lower);
  if (caseless !== undefined) return caseless;
  if (lower.length >= 3) {
    const prefixed = candidates.filter((c) => c.toLowerCase().startsWith(lower));
    if (prefixed.length === 1) return prefixed[0];
  }
  const limit = lower.length <= 3 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** `; did you mean "x"?` or the empty string. */
export function didYouMean(input: string, candidates: readonly string[], aliases?: Readonly<Record<string, string>>): string {
  const match = suggest(input, candidates, aliases);
  return match === undefined ? "" : `; did you mean "${match}"?`;
}

/** `"a", "b" or "c"` for messages. */
export function quoteList(values: readonly string[]): string {
  const quoted = values.map((v) => `"${v}"`);
  if (quoted.length <= 1) return quoted.join("");
  return `${quoted.slice(0, -1).join(", ")} or ${quoted[quoted.length - 1]}`;
}
