// The older create-agent that `upgrade` runs (the project's vendored tarball) gets none of the caller's
// secrets, and a tarball that is not one (a gzip bomb, a random package) is refused before anything runs.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { createTarGz } from "../../src/scaffold/tarball.js";
import {
  MAX_TOOL_BYTES,
  pristineProject,
  vendoredToolEnvironment,
} from "../../src/upgrade/pristine.js";

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function project(tarball: Buffer): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "create-agent-pristine-"));
  made.push(root);
  await writeFile(join(root, "tool.tgz"), tarball);
  return root;
}

/** A stand-in create-agent: it scaffolds one file, then records the environment it was given. */
function spyTool(envFile: string): Buffer {
  const bin = `#!/usr/bin/env node
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
const base = process.argv[2];
mkdirSync(base, { recursive: true });
writeFileSync(join(base, "agent.json"), "{}");
writeFileSync(${JSON.stringify(envFile)}, JSON.stringify(process.env));
`;
  return createTarGz([
    {
      path: "package/package.json",
      contents: Buffer.from('{"name":"create-agent","type":"module"}'),
    },
    { path: "package/bin/create-agent.js", contents: Buffer.from(bin), mode: 0o755 },
  ]);
}

const SECRETS = {
  X402_PAYER_KEY: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  CDP_API_KEY_SECRET: "secret-value",
  GITHUB_TOKEN: "ghp_secret",
  NPM_TOKEN: "npm_secret",
};

it("the vendored create-agent runs with PATH, HOME and temp folders, never the caller's secrets", async () => {
  const envFile = join(tmpdir(), `create-agent-env-${process.pid}.json`);
  made.push(envFile);
  const root = await project(spyTool(envFile));
  const saved = { ...process.env };
  Object.assign(process.env, SECRETS);
  try {
    const files = await pristineProject(root, "tool.tgz", "{}", "npm");
    expect([...files.keys()]).toEqual(["agent.json"]);
  } finally {
    for (const name of Object.keys(SECRETS)) delete process.env[name];
    Object.assign(process.env, saved);
  }
  const seen = JSON.parse(await readFile(envFile, "utf8")) as Record<string, string>;
  for (const [name, value] of Object.entries(SECRETS)) {
    expect(seen[name]).toBeUndefined();
    expect(JSON.stringify(seen)).not.toContain(value);
  }
  expect(seen.PATH).toBe(process.env.PATH);
  expect(seen.CI).toBe("1");
  expect(Object.keys(vendoredToolEnvironment({ ...SECRETS, PATH: "/bin" })).sort()).toEqual([
    "CI",
    "PATH",
  ]);
});

it("a gzip bomb as the vendored tarball is refused as not a valid create-agent tarball", async () => {
  const bomb = createTarGz([
    { path: "package/zeros", contents: Buffer.alloc(MAX_TOOL_BYTES + 1024 * 1024) },
  ]);
  const root = await project(bomb);
  await expect(pristineProject(root, "tool.tgz", "{}", "npm")).rejects.toThrow(
    "tool.tgz is not a valid create-agent tarball: tar: it unpacks to more than 64 MiB",
  );
});

it("a tarball that is not a create-agent package is named as such, not an ENOENT", async () => {
  const other = createTarGz([{ path: "package/index.js", contents: Buffer.from("1") }]);
  const root = await project(other);
  await expect(pristineProject(root, "tool.tgz", "{}", "npm")).rejects.toThrow(
    "tool.tgz is not a valid create-agent tarball: it has no package/package.json or package/bin/create-agent.js",
  );
});
