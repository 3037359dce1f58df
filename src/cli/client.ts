/**
 * `create-agent client <url | agent.json> -o <file.ts>`: writes a typed TypeScript client for a service
 * (src/caller/client-gen.ts), atomically, never over a file it did not write unless --force.
 */
import { readFileSync } from "node:fs";
import { open, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import {
  CLIENT_HEADER_PREFIX,
  type ClientTemplate,
  clientTemplateFiles,
  clientInstallCommand,
  clientMethods,
  generateClient,
} from "../caller/client-gen.js";
import { CLIENT_SHARED_FILES } from "../caller/guard-file.js";
import { isUrl, readService, ServiceError } from "../caller/service.js";
import { recordedFeatures } from "../features.js";
import { TEMPLATES_DIR } from "../generate/templates.js";
import { TOOL_ROOT } from "../scaffold/tool-home.js";
import { writeFileAtomic } from "../write/atomic.js";
import { CliError } from "./errors.js";

export interface ClientOptions {
  output: string;
  force?: boolean;
}

export async function client(source: string, options: ClientOptions): Promise<number> {
  const outFile = options.output;
  if (!/\.ts$/.test(outFile) || /\.d\.ts$/.test(outFile))
    throw new CliError(
      `-o ${outFile}: the client is one TypeScript file: give a path ending in .ts (not .d.ts)`,
    );
  const target = resolve(outFile);
  await checkTarget(target, outFile, options.force === true);

  let service;
  try {
    service = await readService(source);
  } catch (error) {
    if (error instanceof ServiceError) throw new CliError(error.message);
    throw error;
  }
  const label = service.baseUrl ?? source;
  if (service.capabilities.length === 0)
    throw new CliError(
      `${label}: ${service.name} declares no capabilities, so a client has nothing to call`,
    );

  const solana = paysOnSolana(source);
  const text = await generateClient(service, {
    source: label,
    outFile,
    templates: readClientTemplates(solana),
    solana,
  });
  await writeFileAtomic(target, text);

  const rows = clientMethods(service).map(({ capability, method, typeName }) => [
    capability.name,
    `client.${method}(input: ${typeName}Input)`,
    `${capability.price} USDC per job`,
  ]);
  const widths = [0, 1].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = [
    `Wrote ${outFile}: a typed client for ${service.name} (from ${label}).`,
    "",
    "Capabilities:",
    ...rows.map(
      ([name, call, price]) =>
        `  ${name!.padEnd(widths[0]!)}  ${call!.padEnd(widths[1]!)}  ${price}`,
    ),
    "",
    "The client needs these packages (pinned versions):",
    `  ${clientInstallCommand(solana)}`,
    "",
    "Paid calls sign with X402_PAYER_KEY (or the payerKey option); maxPrice caps what one job may cost.",
  ];
  if (service.baseUrl === undefined)
    lines.push(
      "Generated from an agent.json: pass the service's URL as createAgentClient({ baseUrl }).",
    );
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** Refuses a folder, and a file this command did not write (its first line says so) unless --force. */
async function checkTarget(target: string, shown: string, force: boolean): Promise<void> {
  let isFile: boolean;
  try {
    isFile = (await stat(target)).isFile();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new CliError(`cannot check ${shown}: ${(error as Error).message}`);
  }
  if (!isFile) throw new CliError(`${shown} exists and is not a file: give the path of a .ts file`);
  if (force || (await firstLine(target)).startsWith(CLIENT_HEADER_PREFIX)) return;
  throw new CliError(
    `${shown} exists and was not written by create-agent client: pass --force to replace it`,
  );
}

async function firstLine(path: string): Promise<string> {
  const file = await open(path, "r");
  try {
    const buffer = Buffer.alloc(256);
    const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString("utf8").split("\n")[0] ?? "";
  } finally {
    await file.close();
  }
}

/**
 * Whether the client pays on Solana: not for an agent.json whose project records its features without
 * solana (package.json beside it); yes otherwise (a service's GET /about does not say its networks).
 */
export function paysOnSolana(source: string): boolean {
  if (isUrl(source)) return true;
  let pkg: unknown;
  try {
    pkg = JSON.parse(readFileSync(join(dirname(resolve(source)), "package.json"), "utf8"));
  } catch {
    return true;
  }
  return recordedFeatures(pkg).includes("solana");
}

/** The fixed part of every client: the payer's guard, its Solana reader and payment-id.ts, then templates/client/*.ts. */
export function readClientTemplates(solana = true): ClientTemplate[] {
  return [
    ...CLIENT_SHARED_FILES.map((name) => ({
      name,
      text: readFileSync(join(TOOL_ROOT, name), "utf8"),
    })),
    ...clientTemplateFiles(solana).map((name) => ({
      name: `templates/client/${name}`,
      text: readFileSync(join(TEMPLATES_DIR, "client", name), "utf8"),
    })),
  ];
}
