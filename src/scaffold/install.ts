import { PACKAGE_MANAGERS, type PackageManager } from "../generate/package-manager.js";

export { PACKAGE_MANAGERS, type PackageManager } from "../generate/package-manager.js";

/** The package manager that ran us (`npx`, `pnpm dlx`, `yarn create`, `bunx`), else npm. */
export function detectPackageManager(
  userAgent = process.env.npm_config_user_agent ?? "",
): PackageManager {
  const name = userAgent.split("/")[0];
  return (PACKAGE_MANAGERS as readonly string[]).includes(name ?? "")
    ? (name as PackageManager)
    : "npm";
}

/** Whether `<pm> --version` runs: the package manager is installed and on PATH. */
export function isPackageManagerAvailable(
  pm: PackageManager,
  cwd = process.cwd(),
): Promise<boolean> {
  return run(pm, ["--version"], cwd, "ignore");
}

/** What to tell a user whose package manager is missing, before anything is written. */
export function missingPackageManagerMessage(pm: PackageManager): string {
  if (pm === "npm")
    return "npm is not installed (or not on PATH): install Node.js with npm, choose another --package-manager, or pass --no-install";
  const how =
    pm === "bun" ? "`npm install -g bun`" : `\`npm install -g ${pm}\` or \`corepack enable\``;
  return `${pm} is not installed (or not on PATH): install it (e.g. ${how}) or choose --package-manager npm`;
}

/** How a command ended: ok, or why not (it could not start, exited non-zero, or was killed). */
export type RunOutcome =
  | { ok: true }
  | { ok: false; error: Error }
  | { ok: false; exitCode: number }
  | { ok: false; signal: NodeJS.Signals };

/** Runs `<pm> install` in the project, showing its output; `stop` ends it early. Never rejects. */
export function installDependencies(
  dir: string,
  pm: PackageManager,
  stop?: AbortSignal,
): Promise<RunOutcome> {
  return runCommand(pm, ["install"], dir, "inherit", process.platform === "win32", stop);
}

/** Runs a command to its end and says how it ended. Never rejects. */
export async function runCommand(
  command: string,
  args: string[],
  cwd: string,
  stdio: "inherit" | "ignore",
  shell = false,
  stop?: AbortSignal,
): Promise<RunOutcome> {
  const { spawn } = await import("node:child_process"); // loaded only when a command runs
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio, shell, ...(stop && { signal: stop }) });
    child.on("error", (error) => resolve({ ok: false, error }));
    child.on("close", (code, signal) => {
      if (code === 0) resolve({ ok: true });
      else if (signal) resolve({ ok: false, signal });
      else resolve({ ok: false, exitCode: code ?? 1 });
    });
  });
}

/** "exited with code 1", "could not start (spawn pnpm ENOENT)", "was stopped by SIGINT", for messages. */
export function describeFailure(outcome: RunOutcome): string {
  if (outcome.ok) return "succeeded";
  if ("error" in outcome) return `could not start (${outcome.error.message})`;
  if ("signal" in outcome) return `was stopped by ${outcome.signal}`;
  return `exited with code ${outcome.exitCode}`;
}

/** Runs a command; resolves false (never rejects) when it cannot start or exits non-zero. */
export async function run(
  command: string,
  args: string[],
  cwd: string,
  stdio: "inherit" | "ignore",
): Promise<boolean> {
  return (await runCommand(command, args, cwd, stdio, process.platform === "win32")).ok;
}
