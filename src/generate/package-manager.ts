import { x402ClientSpecs } from "../versions.js";

/** The package managers a project can be set up with, and how each runs the project's scripts. */
export const PACKAGE_MANAGERS = ["npm", "pnpm", "yarn", "bun"] as const;
export type PackageManager = (typeof PACKAGE_MANAGERS)[number];

/**
 * `<pm> <script> [args]` as a user types it. npm needs `run` and a `--` before arguments for the
 * script; bun needs `run` (`bun test` would start bun's own test runner); pnpm and yarn take both
 * bare. The CLI ignores a stray `--`, so a user who types npm's form with pnpm is fine too.
 */
export function scriptCommand(pm: PackageManager, script: string, args = ""): string {
  const run = pm === "npm" || pm === "bun" ? `${pm} run ${script}` : `${pm} ${script}`;
  if (!args) return run;
  return pm === "npm" ? `${run} -- ${args}` : `${run} ${args}`;
}

/** The commands a project's README and the CLI's next steps show, for one package manager. */
export function projectCommands(pm: PackageManager) {
  return {
    name: pm,
    install: `${pm} install`,
    dev: scriptCommand(pm, "dev"),
    devPaid: scriptCommand(pm, "dev:paid"),
    test: pm === "bun" ? "bun run test" : `${pm} test`,
    build: scriptCommand(pm, "build"),
    start: pm === "npm" ? "npm start" : scriptCommand(pm, "start"),
    worker: scriptCommand(pm, "worker"),
    typecheck: scriptCommand(pm, "typecheck"),
    generate: scriptCommand(pm, "generate"),
    generateCheck: scriptCommand(pm, "generate", "--check"),
    generateWatch: scriptCommand(pm, "generate", "--watch"),
    addCapability: (args: string) => scriptCommand(pm, "add-capability", args),
    removeCapability: (args: string) => scriptCommand(pm, "remove-capability", args),
    call: (args: string) => scriptCommand(pm, "call", args),
    client: (args: string) => scriptCommand(pm, "client", args),
    smoke: (args: string) => scriptCommand(pm, "smoke", args),
    addFeature: (args: string) => featureCommand(pm, "add", args),
    /** Your own paying code's x402 client (no project carries it; `call` installs its own on first use). */
    installX402: `${pm === "npm" ? "npm install --save-dev" : `${pm} add ${pm === "bun" ? "-d" : "-D"}`} ${x402ClientSpecs.join(" ")}`,
    removeFeature: (args: string) => featureCommand(pm, "remove", args),
  };
}

/**
 * The project's `add`/`remove` scripts as a user types them: always through `run`, since `pnpm add`,
 * `yarn add` and `bun add` (and `remove`) are the package managers' own commands, which would install an
 * npm package of that name instead.
 */
export function featureCommand(pm: PackageManager, script: "add" | "remove", args: string): string {
  return pm === "npm" ? `npm run ${script} -- ${args}` : `${pm} run ${script} ${args}`;
}
