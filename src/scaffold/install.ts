import { spawn } from "node:child_process";

export const PACKAGE_MANAGERS = ["npm", "pnpm", "yarn", "bun"] as const;
export type PackageManager = (typeof PACKAGE_MANAGERS)[number];

/** The package manager that ran us (`npx`, `pnpm dlx`, `yarn create`, `bunx`), else npm. */
export function detectPackageManager(userAgent = process.env.npm_config_user_agent ?? ""): PackageManager {
  const name = userAgent.split("/")[0];
  return (PACKAGE_MANAGERS as readonly string[]).includes(name ?? "") ? (name as PackageManager) : "npm";
}

/** `<pm> run <script>`, as the user would type it (npm and bun need `run` for custom scripts). */
export function runScript(pm: PackageManager, script: string): string {
  return pm === "yarn" || pm === "pnpm" ? `${pm} ${script}` : `${pm} run ${script}`;
}

/** Runs `<pm> install` in the project, showing its output. Resolves to whether it succeeded. */
export function installDependencies(dir: string, pm: PackageManager): Promise<boolean> {
  return run(pm, ["install"], dir, "inherit");
}

/** Runs a command; resolves false (never rejects) when it cannot start or exits non-zero. */
export function run(command: string, args: string[], cwd: string, stdio: "inherit" | "ignore"): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio, shell: process.platform === "win32" });
    child.on("error", () => resolve(false));
    child.on("close", (code) => resolve(code === 0));
  });
}
