import { scriptCommand } from "../generate/package-manager.js";
import { detectPackageManager } from "../scaffold/install.js";

/**
 * How to run one of the project's scripts, for messages: through the package manager that ran us
 * (`npm run generate`, `pnpm generate`...). Never a bare `create-agent ...`: it may not be on PATH,
 * and `npx create-agent` would fetch an unrelated package of that name from the registry.
 */
export function projectScript(script: string, args = ""): string {
  return scriptCommand(detectPackageManager(), script, args);
}
