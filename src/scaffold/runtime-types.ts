import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describeFailure, runCommand, type RunOutcome } from "./install.js";

/**
 * Builds src/runtime's declarations in a freshly installed project (`tsc -b src/runtime` with the project's
 * own TypeScript), as a library in node_modules ships its .d.ts: the project's first `npm run typecheck`
 * then checks your code against them instead of checking the whole runtime again. A pristine runtime always
 * builds; when it cannot (no TypeScript installed, Yarn Plug'n'Play), the first typecheck builds them instead.
 * Never rejects.
 */
export async function prepareRuntimeTypes(dir: string): Promise<RunOutcome> {
  let tsc: string;
  try {
    tsc = createRequire(join(dir, "package.json")).resolve("typescript/bin/tsc");
  } catch (error) {
    return { ok: false, error: error as Error };
  }
  if (!existsSync(join(dir, "src/runtime/tsconfig.json")))
    return { ok: false, error: new Error("src/runtime/tsconfig.json is missing") };
  return runCommand(process.execPath, [tsc, "-b", "src/runtime"], dir, "ignore");
}

/** The line create prints when the declarations could not be built (the project is complete either way). */
export function runtimeTypesWarning(outcome: RunOutcome, typecheck: string): string {
  return `warning: building src/runtime's type declarations (tsc -b src/runtime) ${describeFailure(outcome)}; the first \`${typecheck}\` builds them instead.\n`;
}
