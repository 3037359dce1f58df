import { existsSync } from "node:fs";
import { cp, lstat, mkdir, mkdtemp, readdir, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { TRANSFER_WITH_AUTHORIZATION } from "../../templates/runtime/payments/x402.js";
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";

/**
 * A copy of the shared e2e project (`shared`, from inject("projectDir")) in a fresh temporary folder
 * named after `prefix`: its files without dist/; node_modules a folder of its own linking each installed
 * package (read-only use), so the build info tsc keeps in node_modules/.cache is the copy's own, starting
 * from src/runtime's declarations as the scaffold built them.
 */
export async function copyProject(shared: string, prefix: string): Promise<string> {
  const dir = join(await mkdtemp(join(tmpdir(), prefix)), "project");
  const modules = join(shared, "node_modules");
  await cp(shared, dir, {
    recursive: true,
    filter: (src) => !src.startsWith(modules) && !src.startsWith(join(shared, "dist")),
  });
  await mkdir(join(dir, "node_modules"));
  for (const entry of await readdir(modules))
    if (entry !== ".cache")
      await symlink(join(modules, entry), join(dir, "node_modules", entry), "dir");
  const types = join(modules, ".cache/create-agent");
  for (const entry of ["runtime", "runtime.tsbuildinfo"])
    if (existsSync(join(types, entry)))
      await cp(join(types, entry), join(dir, "node_modules/.cache/create-agent", entry), {
        recursive: true,
      });
  return dir;
}

/**
 * What the README's `npm install --save-dev @x402/fetch@… @x402/evm@… viem@…` gives a copy of the shared
 * project, without the network and without touching the shared project: the packages global-setup's first
 * paid call installed into the shared first-use cache (node_modules/.cache/create-agent-x402), linked
 * into the copy's node_modules (a scope folder the copy links is made the copy's own first).
 */
export async function linkX402Client(copy: string, shared: string): Promise<void> {
  const cache = join(shared, "node_modules/.cache/create-agent-x402/node_modules");
  for (const name of ["@x402/fetch", "@x402/evm", "viem"]) {
    const target = join(copy, "node_modules", name);
    if (existsSync(target)) continue; // viem: a dependency of the onchain feature
    const scope = join(copy, "node_modules", name.split("/")[0]!);
    if (name.startsWith("@") && (await lstat(scope).catch(() => undefined))?.isSymbolicLink()) {
      const real = await realpath(scope);
      await rm(scope);
      await mkdir(scope);
      for (const entry of await readdir(real))
        await symlink(join(real, entry), join(scope, entry), "dir");
    } else if (name.startsWith("@")) await mkdir(scope, { recursive: true });
    await symlink(join(cache, name), target, "dir");
  }
}

/** `npm run build` in a project; throws with its output when it fails. */
export async function buildProject(dir: string): Promise<void> {
  const build = await execa("npm", ["run", "build"], { cwd: dir, reject: false, all: true });
  if (build.exitCode !== 0) throw new Error(`npm run build failed in ${dir}:\n${build.all}`);
}

/**
 * Starts `command args` in `cwd` with `env` and nothing inherited, killed 2 s after a stop signal it
 * ignores; what it prints (stdout and stderr) is collected as it comes.
 */
export function spawnCollecting(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): { child: ResultPromise; output: () => string } {
  const child = execa(command, args, {
    cwd,
    env,
    extendEnv: false,
    reject: false,
    all: true,
    forceKillAfterDelay: 2000,
  });
  let output = "";
  child.all!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

/** Starts `node dist/server.js` in the project with `env` (`node`: another Node.js binary), and waits for the URL it prints. */
export async function startServer(cwd: string, env: Record<string, string>, node = "node") {
  const { child, output } = spawnCollecting(node, ["dist/server.js"], cwd, { PORT: "0", ...env });
  const url = await waitForUrl(child);
  /** Everything the server printed so far. */
  return { url, child, output, stop: () => stop(child) };
}

async function stop(child: ResultPromise) {
  child.kill("SIGTERM");
  return await child;
}

function waitForUrl(child: ResultPromise): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(
      () => reject(new Error(`server printed no URL within 20 s:\n${seen}`)),
      20_000,
    );
    child.all!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /listening on http:\/\/[\w.[\]:-]+:(\d+)/.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${match[1]}`);
      }
    });
    child.then((result) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${result.exitCode}) before listening:\n${seen}`));
    });
  });
}

/** A job request body for the e2e manifest's `summarize` capability, deadline `secondsLeft` from now. */
export function summarizeJob(text: string, jobId: string, secondsLeft = 60): string {
  return JSON.stringify({
    service_version: "1.0",
    job_id: jobId,
    task: { capability: "summarize", input: { text } },
    deadline: Date.now() / 1000 + secondsLeft,
  });
}

/** fetch() options for POST /execute with a JSON body. */
export const post = (body: string, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body,
});

/** The well-known first anvil test key: public, for tests only. */
export const payer = privateKeyToAccount(
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
);

interface Requirement {
  scheme: string;
  network: string;
  amount: string;
  asset: `0x${string}`;
  payTo: `0x${string}`;
  maxTimeoutSeconds: number;
  extra: { name: string; version: string };
}

/** Signs an x402 v2 "exact" payment for a requirement taken from a 402's PAYMENT-REQUIRED header. */
export async function signPayment(
  requirement: Requirement,
  chainId: number,
  change: { value?: string } = {},
  signer: PrivateKeyAccount = payer,
) {
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: signer.address,
    to: requirement.payTo,
    value: requirement.amount,
    validAfter: "0",
    validBefore: String(now + requirement.maxTimeoutSeconds),
    nonce:
      `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}` as `0x${string}`,
  };
  const signature = await signer.signTypedData({
    domain: {
      name: requirement.extra.name,
      version: requirement.extra.version,
      chainId,
      verifyingContract: requirement.asset,
    },
    types: TRANSFER_WITH_AUTHORIZATION,
    primaryType: "TransferWithAuthorization",
    message: {
      from: authorization.from,
      to: authorization.to,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce,
    },
  });
  const payload = {
    signature,
    authorization: { ...authorization, value: change.value ?? authorization.value },
  };
  const message = { x402Version: 2, accepted: requirement, payload };
  return Buffer.from(JSON.stringify(message)).toString("base64");
}

export function decodeHeader<T>(value: string | null): T {
  if (!value) throw new Error("header missing");
  return JSON.parse(Buffer.from(value, "base64").toString("utf8")) as T;
}

export type { Requirement };
