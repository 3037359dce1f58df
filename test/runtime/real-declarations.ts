// The runtime loads heavy packages (viem, @x402/svm, @solana/kit) through loader files typed by its own
// small interfaces. This copies templates/runtime to a temp project, rewrites one loader file's loaders
// (everything from `const load = ` on) to import the packages by name, and type-checks the copy with the
// repo's tsconfig, so the runtime is checked against the packages' own declarations.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "vitest";

const root = new URL("../..", import.meta.url).pathname;

/**
 * Type-checks the runtime with `file`'s loaders (`loaders`: each exported loader's name and the package
 * it loads, which `file` must load by name) rewritten as `export const <name> = () => import("<package>")`;
 * returns tsc's --listFiles output, or throws with the type errors.
 */
export async function typecheckAgainstPackages(
  file: string,
  loaders: Readonly<Record<string, string>>,
): Promise<string> {
  const packages = Object.values(loaders);
  const byName = Object.entries(loaders)
    .map(([name, pkg]) => `export const ${name} = () => import("${pkg}");\n`)
    .join("");
  const work = mkdtempSync(join(tmpdir(), "runtime-real-declarations-"));
  try {
    cpSync(join(root, "templates/runtime"), join(work, "src/runtime"), { recursive: true });
    const path = join(work, "src/runtime", file);
    const source = readFileSync(path, "utf8");
    // The loader file ends with its loaders; here they import the packages by name.
    const at = source.indexOf("const load = ");
    expect(at).toBeGreaterThan(0);
    for (const name of packages) expect(source.slice(at)).toContain(`load("${name}")`);
    writeFileSync(path, `${source.slice(0, at)}${byName}`);
    writeFileSync(join(work, "package.json"), '{ "type": "module" }\n');
    symlinkSync(join(root, "node_modules"), join(work, "node_modules"), "dir");
    writeFileSync(
      join(work, "tsconfig.json"),
      JSON.stringify({ extends: join(root, "tsconfig.json"), include: ["src"] }),
    );
    const tsc = join(root, "node_modules/typescript/bin/tsc");
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [tsc, "-p", join(work, "tsconfig.json"), "--noEmit", "--listFiles"],
      { maxBuffer: 64 * 1024 * 1024 },
    ).catch((err: { stdout?: string }) => {
      const errors = (err.stdout ?? String(err))
        .split("\n")
        .filter((line) => /error TS/.test(line));
      throw new Error(
        `the runtime does not type-check against ${packages.join(" / ")}:\n${errors.join("\n")}`,
      );
    });
    return stdout;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
