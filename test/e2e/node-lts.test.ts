// The Deploy section's advice holds: Node 20 is past its end of life, so production images are built on a
// supported LTS (`--build-arg NODE_IMAGE=node:24-bookworm-slim`). The generated project, built and run on
// Node 24, passes its own tests and serves a real paid job: the official @x402/fetch client pays it on the
// local chain through the real facilitator, and the payee gains exactly the price. Node 24 is the npm
// registry's `node` package (an exact version), installed once into the temporary folder. create-agent itself
// runs there too, writing the same project as on the suite's Node.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative } from "node:path";
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { execa } from "execa";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { PAYEE, PAYER_KEYS } from "../chain/accounts.js";
import { NODE_LTS } from "../node-lts.js";
import { balance, chain, productionEnv } from "./chain.js";
import { CLI } from "./global-setup.js";
import { copyProject, decodeHeader, post, startServer, summarizeJob } from "./helpers.js";

/** The path of Node NODE_LTS's binary, installed into the temporary folder unless it is there already. */
async function nodeLts(): Promise<string> {
  const dir = join(tmpdir(), `create-agent-node-${NODE_LTS}`);
  const bin = join(dir, "node_modules", ".bin", "node");
  const version = () => execa(bin, ["-v"], { reject: false }).then((r) => r.stdout.trim());
  if (existsSync(bin) && (await version()) === `v${NODE_LTS}`) return bin;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await execa("npm", [
    "install",
    "--prefix",
    dir,
    "--no-save",
    "--no-audit",
    "--no-fund",
    `node@${NODE_LTS}`,
  ]);
  expect(await version()).toBe(`v${NODE_LTS}`);
  return bin;
}

const shared = inject("projectDir");
let projectDir = "";
let node = "";
/** PATH with Node NODE_LTS first. */
let path = "";
/** `npm run <script>` in the project on Node NODE_LTS (npm's scripts, tsc and vitest, run on it). */
const npmRun = (script: string) =>
  execa("npm", ["run", script], {
    cwd: projectDir,
    env: { PATH: path, CI: "1" },
    reject: false,
    all: true,
  });

beforeAll(async () => {
  [projectDir, node] = await Promise.all([copyProject(shared, "create-agent-lts-"), nodeLts()]);
  path = `${dirname(node)}${delimiter}${process.env.PATH ?? ""}`;
  const build = await npmRun("build");
  if (build.exitCode !== 0) throw new Error(`npm run build on Node ${NODE_LTS}:\n${build.all}`);
}, 300_000);
afterAll(async () => {
  if (projectDir) await rm(dirname(projectDir), { recursive: true, force: true });
});

describe(`create-agent on Node ${NODE_LTS}`, () => {
  it("writes the same project, byte for byte, as on the Node running this suite", async () => {
    const dir = await mkdtemp(join(tmpdir(), "create-agent-lts-scaffold-"));
    try {
      const trees: Record<string, string>[] = [];
      for (const [folder, bin] of [
        ["here", process.execPath],
        ["lts", node],
      ] as const) {
        await mkdir(join(dir, folder));
        const args = [CLI, "my-agent", "--yes", "--no-install", "--no-git"];
        await execa(bin, args, { cwd: join(dir, folder) });
        trees.push(await readTree(join(dir, folder, "my-agent")));
      }
      expect(Object.keys(trees[1]!).length).toBeGreaterThan(20);
      expect(trees[1]).toEqual(trees[0]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** Every file under `root`, by relative path, with its content. */
async function readTree(root: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      files[relative(root, path)] = (await readFile(path)).toString("base64");
    }
  return files;
}

describe(`the generated project, built on Node ${NODE_LTS}`, () => {
  it("passes its own typecheck and tests there", async () => {
    for (const script of ["typecheck", "test"]) {
      const run = await npmRun(script);
      expect(run.exitCode, `npm run ${script}:\n${run.all}`).toBe(0);
    }
  });

  it("serves a real paid job: @x402/fetch pays through the facilitator, the payee gains exactly the price", async () => {
    const server = await startServer(
      projectDir,
      productionEnv(PAYEE, { PATH: path, X402_FACILITATOR_URL: chain.facilitatorUrl }),
      node,
    );
    try {
      const key = PAYER_KEYS[1]!;
      const payer = privateKeyToAccount(key);
      const pay = wrapFetchWithPayment(
        fetch,
        new x402Client()
          .register("eip155:84532", new ExactEvmScheme(toClientEvmSigner(payer)))
          .setSpendControls(false),
      );
      const [payeeBefore, payerBefore] = [await balance(PAYEE), await balance(payer.address)];
      const res = await pay(
        `${server.url}/execute`,
        post(summarizeJob("lts", `lts-${Date.now()}`)),
      );
      expect(res.status, await res.clone().text()).toBe(200);
      const receipt = decodeHeader<{ success: boolean; transaction: string }>(
        res.headers.get("payment-response"),
      );
      expect(receipt.success).toBe(true);
      expect(await balance(PAYEE)).toBe(payeeBefore + 10_000n);
      expect(await balance(payer.address)).toBe(payerBefore - 10_000n);
    } finally {
      await server.stop();
    }
  });
});
