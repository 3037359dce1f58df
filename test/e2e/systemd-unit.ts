// A systemd unit file read as systemd reads it, for the tests of deploy/agent.service: sections of
// `Key=Value` lines, comments and blank lines skipped, a key given twice keeping both values in order.

export type Unit = Record<string, Record<string, string[]>>;

export function parseUnit(text: string): Unit {
  const unit: Unit = {};
  let section: Record<string, string[]> | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) {
      section = unit[header[1]!] ??= {};
      continue;
    }
    const eq = line.indexOf("=");
    if (!section || eq < 0) throw new Error(`not a unit file line: ${line}`);
    (section[line.slice(0, eq).trim()] ??= []).push(line.slice(eq + 1).trim());
  }
  return unit;
}

/** An EnvironmentFile's or Environment= list's `NAME=value` lines as an object. */
export function environment(lines: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
}
