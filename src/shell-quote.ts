/** A word as a POSIX shell reads it: unchanged when safe, else single-quoted ('It'\''s' for It's). */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
