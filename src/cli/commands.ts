// The CLI's commands, one function each declaring its arguments, options and help text, in the order
// `--help` lists them. Like main.ts, this module loads only commander and a few dependency-free modules:
// each command's implementation is imported inside its action (see test/cli/startup.test.ts).
import { type Command, Option } from "commander";
import { DEFAULT_FEATURES, FEATURE_NAMES } from "../features.js";
import { PACKAGE_MANAGERS } from "../generate/package-manager.js";
import { CALL_HELP_AFTER } from "./call-help.js";
import { CliError } from "./errors.js";
import { projectRoot, requireUpgraded } from "./project-root.js";

/** Hands a command's exit code back to main. */
export type Done = (code: number) => void;

/** Declares one command on `program`; its action reports its exit code through `done`. */
export type CommandDeclaration = (program: Command, done: Done, version: string) => void;

const CWD_FLAGS = "--cwd <dir>";
const CWD_HELP = "the project folder (default: the current folder)";

/** A repeatable option's parser: every value, in order. */
const collect = (value: string, previous: string[] = []) => [...previous, value];

const create: CommandDeclaration = (program, done) => {
  program
    .command("create", { isDefault: true })
    .description("create a new agent project in <directory>")
    .argument("[directory]", "folder to create the project in")
    .option("-y, --yes", "use defaults for every question (no prompts)")
    .option("-m, --manifest <file>", "start from an existing agent.json")
    .option(
      "-f, --force",
      "write into a non-empty folder (not a project's), replacing files the project needs",
    )
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
      // A bare name in a project may be a mistyped command (unless `create` was typed).
      const names = program.commands.map((command) => command.name());
      if (program.args[0] !== "create")
        (await import("./stray-command.js")).refuseStrayCommand(directory, names);
      const { create } = await import("./create.js");
      done(await create(directory, options));
    });
};

const generate: CommandDeclaration = (program, done) => {
  program
    .command("generate")
    .description("regenerate src/generated/ (and missing handler stubs) from agent.json")
    .option("--check", "write nothing; exit 1 and list the files that are out of date")
    .option("--watch", "regenerate on every save of agent.json, until Ctrl-C")
    .option(CWD_FLAGS, CWD_HELP)
    .action(async (options) => {
      if (options.check && options.watch)
        throw new CliError("--check and --watch cannot be used together");
      if (options.watch) {
        const root = projectRoot(options.cwd);
        requireUpgraded(root);
        const { watchManifest } = await import("./watch.js");
        done(await watchManifest(root));
      } else {
        const { generate } = await import("./generate.js");
        done(await generate(options));
      }
    });
};

const dev: CommandDeclaration = (program, done) => {
  program
    .command("dev")
    .description(
      "run the server in dev mode (tsx watch) and regenerate on every save of agent.json",
    )
    .option(CWD_FLAGS, CWD_HELP)
    .option(
      "--paid",
      "production mode with real x402 payments on a local chain (anvil + Circle's USDC), no money, no network",
    )
    .action(async (options: { cwd?: string; paid?: boolean }) => {
      if (options.paid) {
        const { devPaid } = await import("./dev-paid.js");
        done(await devPaid(options));
        return;
      }
      const { dev } = await import("./dev.js");
      done(await dev(options));
    });
};

const addCapability: CommandDeclaration = (program, done) => {
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
    .option(CWD_FLAGS, CWD_HELP)
    .action(async (name: string, options) => {
      const { addCapability } = await import("./capability.js");
      done(await addCapability(name, options));
    });
};

const removeCapability: CommandDeclaration = (program, done) => {
  program
    .command("remove-capability")
    .description(
      "remove a capability from agent.json and the generated code (its handler file is kept)",
    )
    .argument("<name>", "capability name")
    .option(CWD_FLAGS, CWD_HELP)
    .action(async (name: string, options) => {
      const { removeCapability } = await import("./capability.js");
      done(await removeCapability(name, options));
    });
};

/** `add <feature>` and `remove <feature>`: the same command but for remove's --force. */
function featureCommand(verb: "add" | "remove", description: string): CommandDeclaration {
  return (program, done, version) => {
    const command = program
      .command(verb)
      .description(description)
      .argument("<feature>", `one of ${FEATURE_NAMES.join(", ")}`)
      .option("--no-install", "do not install dependencies afterwards")
      .option(CWD_FLAGS, CWD_HELP);
    if (verb === "remove")
      command.option(
        "-f, --force",
        "delete the feature's folder even when it holds your edits or your code imports from it",
      );
    command.action(async (name: string, options) => {
      const { changeFeature } = await import("./feature.js");
      done(await changeFeature(verb, name, options, version));
    });
  };
}

/** Said by both --check and --dry-run: they write nothing, but still run the vendored create-agent. */
const WRITES_NOTHING =
  "write nothing (the project's vendored create-agent still runs, without your secrets)";

const upgrade: CommandDeclaration = (program, done, version) => {
  program
    .command("upgrade")
    .description(
      "bring a project made by an older create-agent to this one: three-way merge of its runtime and project files",
    )
    .option("--check", `${WRITES_NOTHING}; exit 1 when the project is behind this create-agent`)
    .option("--dry-run", `${WRITES_NOTHING}; print a unified diff of every file it would change`)
    .option(CWD_FLAGS, CWD_HELP)
    .action(async (options) => {
      if (options.check && options.dryRun)
        throw new CliError("--check and --dry-run cannot be used together");
      const { upgrade } = await import("./upgrade.js");
      done(await upgrade(options, version));
    });
};

const call: CommandDeclaration = (program, done) => {
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
      collect,
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
      collect,
    )
    .option(
      "--async",
      "ask for an asynchronous job (Prefer: respond-async): on 202 poll its Location until it finishes (for jobs longer than a proxy waits; EVM payments)",
    )
    .option(
      "--mcp",
      "send the job as an MCP tool call to the service's /mcp (x402 MCP transport) instead of POST /execute; paid and checked the same way (also when the URL ends in /mcp)",
    )
    .addHelpText("after", CALL_HELP_AFTER)
    .action(async (first: string, second: string | undefined, options) => {
      const { callCommand } = await import("./call.js");
      done(await callCommand(first, second, { input: [], ...options }));
    });
};

const smoke: CommandDeclaration = (program, done) => {
  program
    .command("smoke")
    .description(
      "check a deployment: /health, the agent card, /openapi.json, and its 402 offer against this project's configuration",
    )
    .argument("[url]", "the deployment (default: AGENT_URL, else http://localhost:$PORT)")
    .option("--pay-to <address>", "the payee expected of EVM offers (default: PAY_TO)")
    .option(
      "--pay-to-solana <address>",
      "the payee expected of Solana offers (default: PAY_TO_SOLANA)",
    )
    .option(
      "--network <name|caip2>",
      "a network expected, repeatable, in order (default: X402_NETWORKS or X402_NETWORK)",
      collect,
    )
    // Not --env-file: Node 20 takes that flag for itself anywhere on the command line (and exits 9).
    .option(
      "--settings <file>",
      "read the expected settings from this file instead of .env (e.g. .env.production, compose's)",
    )
    .option("--pay", "then run one paid job (X402_PAYER_KEY or SOLANA_PAYER_KEY, as call)")
    .option("--mainnet", "allow --pay on a network that is not a testnet (real money)")
    .option(CWD_FLAGS, CWD_HELP)
    .action(async (url: string | undefined, options) => {
      const { smokeCommand } = await import("./smoke.js");
      done(await smokeCommand(url, options));
    });
};

const client: CommandDeclaration = (program, done) => {
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
      done(await client(source, options));
    });
};

/** Every command, in the order `--help` lists them. */
export const COMMANDS: readonly CommandDeclaration[] = [
  create,
  generate,
  dev,
  addCapability,
  removeCapability,
  featureCommand(
    "add",
    "add an optional feature to the project: its runtime folder, packages and record, then install",
  ),
  featureCommand(
    "remove",
    "remove an optional feature: delete its runtime folder (refused if you edited it or your code imports it), drop its packages and record",
  ),
  upgrade,
  call,
  smoke,
  client,
];
