import { Command, CommanderError, Option } from "commander";
import { DEFAULT_FEATURES, FEATURE_NAMES } from "../features.js";
import { PACKAGE_MANAGERS } from "../generate/package-manager.js";
import { ManifestError } from "../manifest/errors.js";
import { CALL_HELP_AFTER } from "./call-help.js";
import { CliError } from "./errors.js";
import { projectRoot, requireUpgraded, toolVersion } from "./project-root.js";

// Start-up: this module loads only commander and a few dependency-free modules. Each command's
// implementation is imported inside its action, so `create-agent generate` never loads the scaffolding
// code, `call` never loads the generators, and `--help` or a usage error loads none of them.

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
    .showHelpAfterError("(add --help for usage)");

  program
    .command("create", { isDefault: true })
    .description("create a new agent project in <directory>")
    .argument("[directory]", "folder to create the project in")
    .option("-y, --yes", "use defaults for every question (no prompts)")
    .option("-m, --manifest <file>", "start from an existing agent.json")
    .option("-f, --force", "write into a non-empty folder, replacing files the project needs")
    .option("--no-install", "do not install dependencies")
    .option("--no-git", "do not create a git repository")
    .option(
      "--features <list>",
      `optional features, comma-separated (${FEATURE_NAMES.join(", ")}), or all, or none (default: ${DEFAULT_FEATURES.join(", ")})`,
    )
    .option(
      "--inside-tool-repo",
      "allow creating the project inside create-agent's own folder (refused otherwise)",
    )
    .addOption(
      new Option("--package-manager <name>", "package manager for install and next steps").choices(
        PACKAGE_MANAGERS,
      ),
    )
    .action(async (directory: string | undefined, options) => {
      const { create } = await import("./create.js");
      code = await create(directory, options);
    });

  program
    .command("generate")
    .description("regenerate src/generated/ (and missing handler stubs) from agent.json")
    .option("--check", "write nothing; exit 1 and list the files that are out of date")
    .option("--watch", "regenerate on every save of agent.json, until Ctrl-C")
    .option("--cwd <dir>", "the project folder (default: the current folder)")
    .action(async (options) => {
      if (options.check && options.watch)
        throw new CliError("--check and --watch cannot be used together");
      if (options.watch) {
        const root = projectRoot(options.cwd);
        requireUpgraded(root);
        const { watchManifest } = await import("./watch.js");
        code = await watchManifest(root);
      } else {
        const { generate } = await import("./generate.js");
        code = await generate(options);
      }
    });

  program
    .command("dev")
    .description(
      "run the server in dev mode (tsx watch) and regenerate on every save of agent.json",
    )
    .option("--cwd <dir>", "the project folder (default: the current folder)")
    .option(
      "--paid",
      "production mode with real x402 payments on a local chain (anvil + Circle's USDC), no money, no network",
    )
    .action(async (options: { cwd?: string; paid?: boolean }) => {
      if (options.paid) {
        const { devPaid } = await import("./dev-paid.js");
        code = await devPaid(options);
        return;
      }
      const { dev } = await import("./dev.js");
      code = await dev(options);
    });

  const collect = (value: string, previous: string[]) => [...previous, value];
  program
    .command("add-capability")
    .description("add a capability to agent.json, write its handler stub, and regenerate")
    .argument("<name>", "capability name (letters, digits, - and _)")
    .option("--price <usdc>", "price per job in USDC", "0.01")
    .option("--description <text>", "what the capability does")
    .option(
      "--input <name:type>",
      "an input field, repeatable: text:string! (! required), tags:string[]",
      collect,
      [],
    )
    .option(
      "--output <name:type>",
      "an output field, repeatable: summary:string (? optional)",
      collect,
      [],
    )
    .option("--cwd <dir>", "the project folder (default: the current folder)")
    .action(async (name: string, options) => {
      const { addCapability } = await import("./capability.js");
      code = await addCapability(name, options);
    });

  program
    .command("remove-capability")
    .description(
      "remove a capability from agent.json and the generated code (its handler file is kept)",
    )
    .argument("<name>", "capability name")
    .option("--cwd <dir>", "the project folder (default: the current folder)")
    .action(async (name: string, options) => {
      const { removeCapability } = await import("./capability.js");
      code = await removeCapability(name, options);
    });

  for (const verb of ["add", "remove"] as const) {
    const command = program
      .command(verb)
      .description(
        verb === "add"
          ? "add an optional feature to the project: its runtime folder, packages and record, then install"
          : "remove an optional feature: delete its runtime folder (refused if you edited it), drop its packages and record",
      )
      .argument("<feature>", `one of ${FEATURE_NAMES.join(", ")}`)
      .option("--no-install", "do not install dependencies afterwards")
      .option("--cwd <dir>", "the project folder (default: the current folder)");
    if (verb === "remove")
      command.option("-f, --force", "delete the feature's folder even when it holds your edits");
    command.action(async (name: string, options) => {
      const { changeFeature } = await import("./feature.js");
      code = await changeFeature(verb, name, options, VERSION);
    });
  }

  program
    .command("upgrade")
    .description(
      "bring a project made by an older create-agent to this one: three-way merge of its runtime and project files",
    )
    .option(
      "--check",
      "write nothing (the project's vendored create-agent still runs, without your secrets); exit 1 when the project is behind this create-agent",
    )
    .option(
      "--dry-run",
      "write nothing (the project's vendored create-agent still runs, without your secrets); print a unified diff of every file it would change",
    )
    .option("--cwd <dir>", "the project folder (default: the current folder)")
    .action(async (options) => {
      if (options.check && options.dryRun)
        throw new CliError("--check and --dry-run cannot be used together");
      const { upgrade } = await import("./upgrade.js");
      code = await upgrade(options, VERSION);
    });

  program
    .command("call")
    .description("call one capability of a running service, paying it with x402 USDC if it asks")
    .usage("[url] <capability> [options]")
    .argument(
      "<url-or-capability>",
      "the service URL, then the capability; or only the capability (the URL then defaults, see below)",
    )
    .argument("[capability]", "the capability to call, when a URL comes first")
    .option(
      "--input <name=value>",
      "an input field, repeatable; typed by the field's declared type (arrays and objects as JSON)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      "--json [file]",
      "with a file: the input object is read from it (- = stdin), --input values go on top; " +
        "without a file: machine mode, stdout is exactly one JSON document (put it after the capability)",
    )
    .option("--max-price <usdc>", "the most to pay for this job, in USDC (e.g. 0.05)")
    .option("--job-id <id>", "the job_id to send (default: call-<random UUID>)")
    .option(
      "--deadline-seconds <n>",
      "seconds the service has to finish the job (default: 300; 30 when paying on Solana)",
    )
    .option(
      "--network <name>",
      "the offered network to pay on: a name (base, solana-devnet, ...) or a CAIP-2 id (default: the first offered network you hold a key for)",
    )
    .option(
      "--asset <address>",
      "also pay in this token (contract or mint address), repeatable; without it only the network's USDC is paid",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .addHelpText("after", CALL_HELP_AFTER)
    .action(async (first: string, second: string | undefined, options) => {
      const { callCommand } = await import("./call.js");
      code = await callCommand(first, second, { input: [], ...options });
    });

  program
    .command("client")
    .description(
      "write a typed TypeScript client for a service: one async function per capability, paying with x402",
    )
    .argument("<source>", "the service's URL (read from its GET /about) or an agent.json file")
    .requiredOption("-o, --output <file.ts>", "the TypeScript file to write")
    .option("-f, --force", "replace the file even if create-agent client did not write it")
    .action(async (source: string, options) => {
      const { client } = await import("./client.js");
      code = await client(source, options);
    });

  try {
    await program.parseAsync(withoutSeparators(argv));
    return code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof ManifestError || error instanceof CliError) {
      process.stderr.write(`create-agent: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(
      `create-agent: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 1;
  }
}
