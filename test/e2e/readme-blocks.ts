// Reading the generated README as a user does: a section by its heading, and the fenced code blocks in it
// (list-item indentation removed), so tests run the README's own commands and scripts verbatim.

export interface CodeBlock {
  lang: string;
  text: string;
}

/**
 * The text of a README section: from its heading to the next heading of the same or a higher level (a
 * line starting with `#` inside a fenced code block, such as a Python comment, is no heading).
 */
export function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0)
    throw new Error(`the generated README has no "${heading}" section: the README changed shape`);
  const level = heading.indexOf(" ");
  const lines = markdown.slice(start + heading.length + 2).split("\n");
  let fenced = false;
  const end = lines.findIndex((line) => {
    if (/^ *```/.test(line)) fenced = !fenced;
    return !fenced && new RegExp(`^#{1,${level}} `).test(line);
  });
  return (end < 0 ? lines : lines.slice(0, end)).join("\n");
}

/** Fenced code blocks, with the indentation of a list item removed from every line. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  for (const match of markdown.matchAll(/^( *)```(\w*)\n([\s\S]*?)^\1```$/gm)) {
    const indent = match[1]!;
    const text = match[3]!
      .split("\n")
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join("\n");
    blocks.push({ lang: match[2]!, text });
  }
  return blocks;
}
