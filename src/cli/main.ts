import { Command, CommanderError } from "commander";
import { ManifestError } from "../manifest/errors.js";
import { COMMANDS } from "./commands.js";
import { CliError } from "./errors.js";
import { toolVersion } from "./project-root.js";

// Start-up: this module loads only commander and a few dependency-free modules. Each command's
// implementation is imported inside its action, so `create-agent generate` never loads the scaffolding
// code, `call` never loads the generators, and `--help` or a usage error loads none of them. The
// commands themselves are declared in commands.ts.

/** This package's version, from its package.json. */
const VERSION = toolVersion();

/**
 * Drops `--` separators. `npm run generate -- --check` passes `--check` alone, but pnpm passes the `--`
 * on (`create-agent generate -- --check`), which would make `--check` an operand: "too many arguments".
 * No create-agent operand starts with `-`, so a separator is never needed.
 */
function withoutSeparators(argv: string[]): string[] {
  return [...argv.slice(0, 2), ...argv.slice(2).filter((arg) => arg !== "--")];
}

/** Runs the CLI; resolves to the process exit code. All user-facing failures are one message and code 1. */
export async function main(argv: string[]): Promise<number> {
  let code = 0;
  const program = new Command("create-agent")
    .description(
      "Scaffold and evolve typed, pay-per-job (x402 USDC) agent services from agent.json",
    )
    .version(VERSION)
    .exitOverride()
    .showHelpAfterError(
      "(for usage, the same command with --help; through npm run: npm run <script> -- --help)",
    );

  for (const declare of COMMANDS) declare(program, (exit) => (code = exit), VERSION);

  try {
    await program.parseAsync(withoutSeparators(argv));
    return code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    // OutsideProjectError (write/outside.ts) by its name: importing it would load it on every command.
    const outside = error instanceof Error && error.name === "OutsideProjectError";
    if (error instanceof ManifestError || error instanceof CliError || outside) {
      process.stderr.write(`create-agent: ${error.message}\n`);
      return 1;
    }
    // The file system said no (permissions, a read-only or full disk): its message names the path.
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (code !== undefined && FILE_SYSTEM_REFUSALS.has(code)) {
      process.stderr.write(
        `create-agent: ${(error as Error).message} (check that folder's owner and permissions, or the disk)\n`,
      );
      return 1;
    }
    process.stderr.write(
      `create-agent: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 1;
  }
}

/** File-system errors that are the machine's answer, not a bug: said plainly, without a stack trace. */
const FILE_SYSTEM_REFUSALS = new Set(["EACCES", "EPERM", "EROFS", "ENOSPC", "EDQUOT"]);
