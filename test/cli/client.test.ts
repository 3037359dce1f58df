// `create-agent client`: the real CLI (node bin/create-agent.js) writes a typed client; the client is then
// type-checked in a fresh strict project and run with node against real in-process servers (createApp):
// a dev-mode one (free, no key) and production ones paid through the official x402 client, settled here by
// a recording settler (on-chain money is test/chain/client.test.ts).
import { finished } from "../runtime/async-poll.js";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLIENT_HEADER_PREFIX,
  CLIENT_NO_SOLANA_FILE,
  CLIENT_TEMPLATE_FILES,
  generateClient,
} from "../../src/caller/client-gen.js";
import { parseAbout } from "../../src/caller/service.js";
import { readClientTemplates } from "../../src/cli/client.js";
import { createApp } from "../../templates/runtime/app.js";
import {
  ANVIL_KEY,
  capability,
  captureLogger,
  listen,
  makeAgent,
  production,
  recordingSettler,
  type Running,
  type TestAgent,
} from "../runtime/helpers.js";
import { closedUrl, freePort } from "../runtime/servers.js";
import {
  buildCli,
  dropProxy,
  makeTemp,
  priceRefusal,
  ROOT,
  runCli,
  tsProject,
  type TsProject,
} from "./client-project.js";

const FIXTURES = join(ROOT, "fixtures/manifests");
const INSTALL =
  "npm install @x402/evm@2.27.0 @x402/fetch@2.27.0 @solana-program/token@0.9.0 @solana/kit@5.5.1 @x402/svm@2.27.0 viem@2.57.1";
const temps: Array<{ remove(): Promise<void> }> = [];
const temp = async (prefix: string) => {
  const t = await makeTemp(prefix);
  temps.push(t);
  return t.dir;
};

beforeAll(buildCli, 120_000);
afterAll(async () => {
  await Promise.all(temps.map((t) => t.remove()));
});

describe("from an agent.json (every keyword)", () => {
  it("writes the client, lists the capabilities and the pinned install line; the types are real under strict mode", async () => {
    const dir = await temp("client-json");
    const project = await tsProject(dir, "bare");
    const out = join(dir, "src/agent-client.ts");
    const manifest = join(FIXTURES, "valid/every-keyword.json");
    const r = await runCli(["client", manifest, "-o", out]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Wrote ${out}: a typed client for every-keyword`);
    expect(r.stdout).toMatch(
      /analyze\s+client\.analyze\(input: AnalyzeInput\)\s+0\.250000 USDC per job/,
    );
    expect(r.stdout).toContain(INSTALL);
    expect(r.stdout).toContain("createAgentClient({ baseUrl })");

    const text = await readFile(out, "utf8");
    const lines = text.split("\n");
    expect(lines[0]).toBe(
      `${CLIENT_HEADER_PREFIX} from ${manifest}. Do not edit by hand: regenerate with`,
    );
    expect(lines[1]).toBe(`//   create-agent client ${manifest} -o ${out}`);
    expect(text).toContain(`// It needs these packages: ${INSTALL}`);
    // One self-contained file: package imports only, each module once, all at the top.
    const imports = lines.filter((l) => l.startsWith("import "));
    expect(imports.join("\n")).not.toMatch(/from "\.\//);
    expect(new Set(imports.map((l) => /from "([^"]+)"/.exec(l)?.[1])).size).toBe(imports.length);
    const code = text.search(/^export /m);
    expect(text.lastIndexOf("\nimport ")).toBeLessThan(code);
    expect(text.slice(0, code).match(/ from "/g)).toHaveLength(imports.length);
    expect(text).toContain('capabilities: {\n    analyze: { price: "0.250000" },');
    expect(text).toContain("baseUrl: undefined,");

    // A capability list the manifest rules would refuse, as a foreign GET /about might send it.
    const foreign = parseAbout(
      {
        service_version: "1.0",
        name: "foreign",
        capabilities: Object.fromEntries(
          ["delete", "get-url", "getUrl", "2fa", "__proto__", "AgentClient"].map((name) => [
            name,
            {
              pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
              input_schema: { text: { type: "string", required: true } },
              output_schema: { text: { type: "string" } },
            },
          ]),
        ),
      },
      "test",
    );
    await project.write(
      "foreign-client.ts",
      await generateClient(
        { ...foreign, baseUrl: "http://127.0.0.1:9" },
        {
          source: "http://127.0.0.1:9",
          outFile: "foreign-client.ts",
          templates: readClientTemplates(),
        },
      ),
    );

    await project.write(
      "usage.ts",
      `import { AgentCallError, createAgentClient, type AnalyzeInput, type AnalyzeOutput } from "./agent-client.js";
import { createAgentClient as foreignClient } from "./foreign-client.js";

const agent = createAgentClient({ baseUrl: "http://127.0.0.1:9", maxPrice: "0.5", retries: 0 });
const tags: string[] = ["a", "b"]; // a plain array, not a tuple per maxItems
const input: AnalyzeInput = {
  text: "hello",
  language: "fr",
  depth: 3,
  tags,
  options: { mode: "thorough", limits: { max_pages: 2 } },
  metadata: { anything: [1, "two"] },
};

export async function titles(): Promise<string[]> {
  try {
    const result = await agent.analyze(input, { jobId: "job-1", deadline: new Date() });
    const sections: AnalyzeOutput["sections"] = result.output.sections;
    const matrix: number[][] = result.output.matrix;
    const id: string = result.output.id;
    const hash: string | undefined = result.payment?.transaction;
    return [...sections.map((s) => s.title), String(matrix.length), id, hash ?? ""];
  } catch (error) {
    if (error instanceof AgentCallError) return [error.errorType, String(error.status)];
    throw error;
  }
}

export async function wrong(): Promise<void> {
  // @ts-expect-error text is required
  await agent.analyze({ language: "en" });
  // @ts-expect-error language is one of en, fr, de
  await agent.analyze({ text: "x", language: "es" });
  // @ts-expect-error the input is closed: no unknown fields
  await agent.analyze({ text: "x", colour: "red" });
  // @ts-expect-error options.mode is required
  await agent.analyze({ text: "x", options: {} });
  const result = await agent.analyze({ text: "x" });
  // @ts-expect-error score is a number
  const score: string = result.output.sections[0]!.score;
  // @ts-expect-error warnings may be missing
  const warnings: string[] = result.output.warnings;
  // @ts-expect-error a generated-from-agent.json client needs a baseUrl
  createAgentClient({});
  void [score, warnings];
}

// Odd capability names still make usable, distinct methods.
const foreign = foreignClient({ maxPrice: "0.01" });
export const methods = [foreign.deleteJob, foreign.getUrl, foreign.getUrl2, foreign.capability2fa, foreign.proto, foreign.agentClient];
`,
    );
    await project.write(
      "bad.ts",
      `import { createAgentClient } from "./agent-client.js";
export const job = createAgentClient({ baseUrl: "http://127.0.0.1:9" }).analyze({ text: 42 });
`,
    );
    const { ok, output } = await project.compile();
    expect(ok).toBe(false);
    // The only error: bad.ts passes a number where the input type says string.
    const errors = output.split("\n").filter((l) => /error TS\d+/.test(l));
    expect(errors, output).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^src\/bad\.ts\(2,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/,
    );
  }, 120_000);
});

describe("from running services", () => {
  let dev: Running;
  let paid: Running & { settler: ReturnType<typeof recordingSettler>; agent: TestAgent };
  /** The same capabilities priced higher than when the client was generated. */
  let dearer: Running;
  let project: TsProject;

  beforeAll(async () => {
    dev = await listen(createApp(makeAgent(), { devMode: true, env: {}, logger: captureLogger() }));
    const settler = recordingSettler();
    const agent = paidAgent("10000");
    paid = {
      ...(await listen(
        createApp(agent, { ...production(settler), env: {}, logger: captureLogger() }),
      )),
      settler,
      agent,
    };
    dearer = await listen(
      createApp(paidAgent("20000"), { ...production(), env: {}, logger: captureLogger() }),
    );

    const dir = await temp("client-url");
    project = await tsProject(dir, "node");
    for (const [source, file] of [
      [`${dev.url}/about`, "dev-client.ts"],
      [paid.url, "paid-client.ts"],
    ] as const) {
      const r = await runCli(["client", source, "-o", join(dir, "src", file)]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    await project.write("dev.ts", DEV_SCRIPT);
    await project.write("pay.ts", PAY_SCRIPT);
    const { ok, output } = await project.compile();
    expect(ok, output).toBe(true);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([dev?.close(), paid?.close(), dearer?.close()]);
  });

  it("the client defaults to the URL it was generated from; a dev-mode service needs no payer key", async () => {
    const text = await readFile(join(project.dir, "src/dev-client.ts"), "utf8");
    expect(text.split("\n")[0]).toBe(
      `${CLIENT_HEADER_PREFIX} from ${dev.url}. Do not edit by hand: regenerate with`,
    );
    expect(text).toContain(`baseUrl: ${JSON.stringify(dev.url)},`);

    const down = await closedUrl();
    const r = await project.run("dev.js", [down]);
    expect(r.exitCode, r.stderr).toBe(0);
    const printed = JSON.parse(r.stdout);
    expect(printed.echo).toEqual({ text: "hello", jobId: "job-typed-1", payment: null });
    expect(printed.completedAt).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(printed.failure).toEqual({
      errorType: "validation",
      status: 400,
      message: "throws failed: validation (HTTP 400): text: the handler does not like it",
    });
    expect(printed.unknown).toMatchObject({ errorType: "capability", status: 400 });
    expect(printed.late).toMatchObject({ errorType: "deadline", status: 408 });
    expect(printed.down).toEqual({
      errorType: "network",
      message: `echo failed: network: no answer from POST ${down}/execute after 2 attempts: ECONNREFUSED (connect ECONNREFUSED ${down.slice(7)})`,
    });
    expect(printed.sent).toEqual([`${dev.url}/execute`]);
    // A job that failed with a 503 of its own (Job-Status: failed): returned from its first 503, neither
    // re-sent by the retrying fetch nor polled on (to the deadline, 300 s, plus a minute, before the fix).
    expect(printed.unavailable).toMatchObject({
      errorType: "internal",
      status: 503,
      message: expect.stringContaining("the upstream model is down: try again later"),
    });
    expect(printed.unavailable.ms).toBeLessThan(20_000);
    expect(printed.unavailable.polls.filter((s: number) => s === 503)).toEqual([503]);
    // The job it stopped waiting for runs on; its answer is where the error said, for its token.
    expect(printed.stopped).toMatchObject({
      errorType: "aborted",
      queued: {
        url: expect.stringMatching(/\/jobs\/job_[0-9a-f]{32}$/),
        token: expect.any(String),
      },
    });
    const { url, token } = printed.stopped.queued;
    expect(new URL(url).origin).toBe(dev.url);
    const answer = await finished(dev.url, new URL(url).pathname, token, 10_000, 100);
    expect(answer).toMatchObject({
      status: 200,
      body: { status: "completed", output: { text: "later" } },
    });
  });

  it("pays a production service once, within the declared price, and decodes the receipt", async () => {
    const before = paid.settler.settled();
    const r = await project.run("pay.js", [paid.url, "echo", "0.05", "job-paid-1"], {
      X402_PAYER_KEY: ANVIL_KEY,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const printed = JSON.parse(r.stdout);
    expect(printed).toMatchObject({ ok: true, jobId: "job-paid-1", output: { text: "paid" } });
    expect(printed.payment).toEqual({
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      network: "eip155:84532",
      payer: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
      amount: "0.01",
    });
    expect(paid.settler.settled()).toBe(before + 1);
  });

  it("maxPrice below the price: refused before signing, the service never sees a payment", async () => {
    const proxy = await dropProxy(paid.url, "never");
    try {
      const before = paid.settler.calls.length;
      const r = await project.run("pay.js", [proxy.url, "echo", "0.001", "job-cheap"], {
        X402_PAYER_KEY: ANVIL_KEY,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(priceRefusal("0.001"));
      expect(proxy.requests.map((q) => q.payment)).toEqual([undefined]);
      expect(paid.settler.calls.length).toBe(before);
    } finally {
      await proxy.close();
    }
  });

  it("a service asking more than it declared when the client was generated is refused, whatever maxPrice allows", async () => {
    const r = await project.run("pay.js", [dearer.url, "echo", "5", "job-dearer"], {
      X402_PAYER_KEY: ANVIL_KEY,
    });
    const printed = JSON.parse(r.stdout);
    expect(printed).toMatchObject({ ok: false, errorType: "price", status: 402 });
    expect(printed.message).toContain("the service asks 0.02 USDC, more than 0.01 USDC (the price");
    expect(printed.message).toContain("regenerate the client to accept a new price");
  });

  it("without a payer key a paid service is refused with a clear error, nothing signed", async () => {
    const r = await project.run("pay.js", [paid.url, "echo", "", "job-nokey"]);
    expect(JSON.parse(r.stdout)).toEqual({
      ok: false,
      errorType: "payer",
      status: 402,
      message:
        "echo failed: payer (HTTP 402): the service asks for payment, but no payer key is set: pass `payerKey` or set X402_PAYER_KEY; nothing was signed",
    });
  });

  it.each([
    ["after-answer", "echo"],
    ["while-running", "wait"],
  ] as const)(
    "the paid answer is lost (%s): the identical request is re-sent, one signature, charged once",
    async (mode, capabilityName) => {
      const proxy = await dropProxy(paid.url, mode);
      try {
        const settled = paid.settler.settled();
        const runs = paid.agent.calls[capabilityName] ?? 0;
        const r = await project.run("pay.js", [proxy.url, capabilityName, "", `job-${mode}`], {
          X402_PAYER_KEY: ANVIL_KEY,
        });
        expect(r.exitCode, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout), r.stdout).toMatchObject({
          ok: true,
          output: { text: "paid" },
        });

        const paidRequests = proxy.requests.filter((q) => q.payment !== undefined);
        expect(new Set(paidRequests.map((q) => q.payment)).size).toBe(1); // signed once
        expect(new Set(paidRequests.map((q) => q.body)).size).toBe(1); // the identical job
        expect(paidRequests[0]!.outcome).toBe("dropped");
        expect(paidRequests.at(-1)!.outcome).toBe(200);
        if (mode === "while-running") expect(paidRequests.map((q) => q.outcome)).toContain(402);
        expect(paid.agent.calls[capabilityName]).toBe(runs + 1); // the handler ran once
        expect(paid.settler.settled()).toBe(settled + 1); // charged once
      } finally {
        await proxy.close();
      }
    },
  );
});

it("every file of templates/client goes into the client", async () => {
  const files = (await readdir(join(ROOT, "templates/client"))).sort();
  expect(files).toEqual([...CLIENT_TEMPLATE_FILES, CLIENT_NO_SOLANA_FILE].sort());
});

describe("the output file", () => {
  it("is refused unless it ends in .ts; a file it did not write is kept unless --force; its own is replaced", async () => {
    const dir = await temp("client-out");
    const manifest = join(FIXTURES, "valid/minimal.json");

    const js = await runCli(["client", manifest, "-o", join(dir, "client.js")]);
    expect(js.exitCode).toBe(1);
    expect(js.stderr).toContain("give a path ending in .ts");

    const missing = await runCli(["client", manifest]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("required option '-o, --output <file.ts>'");

    await mkdir(join(dir, "folder.ts"));
    const folder = await runCli(["client", manifest, "-o", join(dir, "folder.ts")]);
    expect(folder.exitCode).toBe(1);
    expect(folder.stderr).toContain("exists and is not a file");

    const mine = join(dir, "mine.ts");
    await writeFile(mine, "// my own code\n");
    const refused = await runCli(["client", manifest, "-o", mine]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toBe(
      `create-agent: ${mine} exists and was not written by create-agent client: pass --force to replace it`,
    );
    expect(await readFile(mine, "utf8")).toBe("// my own code\n");

    const forced = await runCli(["client", manifest, "-o", mine, "--force"]);
    expect(forced.exitCode, forced.stderr).toBe(0);
    const first = await readFile(mine, "utf8");
    expect(first.startsWith(CLIENT_HEADER_PREFIX)).toBe(true);

    const again = await runCli(["client", manifest, "-o", mine]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(await readFile(mine, "utf8")).toBe(first); // same input, same bytes
  });

  it("bad sources say what and where", async () => {
    const dir = await temp("client-bad");
    const out = join(dir, "client.ts");
    const none = await runCli(["client", join(dir, "nope.json"), "-o", out]);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain(
      `"${join(dir, "nope.json")}" is neither an http(s) URL nor an existing agent.json file`,
    );

    const invalid = join(FIXTURES, "invalid/amount-zero.json");
    const bad = await runCli(["client", invalid, "-o", out]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain('amount "0" is zero');
    expect(bad.stderr).toContain("amount-zero.json:6:50");

    const port = await freePort();
    const down = await runCli(["client", `http://127.0.0.1:${port}/about`, "-o", out]);
    expect(down.exitCode).toBe(1);
    expect(down.stderr).toContain(`cannot reach http://127.0.0.1:${port}/about: ECONNREFUSED`);
  });
});

/** echo, and "wait": echoes after 1.5 s (long enough to lose its answer while it runs). */
function paidAgent(priceAtomic: string): TestAgent {
  const agent = makeAgent();
  const textSchema = {
    type: "object",
    additionalProperties: false,
    required: ["text"],
    properties: { text: { type: "string" } },
  };
  agent.capabilities = {
    echo: capability("echo", priceAtomic, textSchema, textSchema, async (input) => {
      agent.calls.echo = (agent.calls.echo ?? 0) + 1;
      return { text: input.text };
    }),
    wait: capability("wait", priceAtomic, textSchema, textSchema, async (input) => {
      agent.calls.wait = (agent.calls.wait ?? 0) + 1;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return { text: input.text };
    }),
  };
  return agent;
}

const DEV_SCRIPT = `import { AgentCallError, createAgentClient, SERVICE, type EchoInput, type EchoOutput, type JobResult } from "./dev-client.js";
import { AgentCallError as PaidCallError, createAgentClient as paidClient } from "./paid-client.js";

// No baseUrl (the URL it was generated from) and no payer key anywhere.
const agent = createAgentClient({ retries: 0 });
const input: EchoInput = { text: "hello" };
const result: JobResult<EchoOutput> = await agent.echo(input, { jobId: "job-typed-1" });
const text: string = result.output.text;

const failure = async (run: () => Promise<unknown>) => {
  try {
    await run();
    return null;
  } catch (error) {
    // Each generated client has its own error class.
    if (!(error instanceof AgentCallError || error instanceof PaidCallError)) throw error;
    return { errorType: error.errorType, status: error.status, message: error.message };
  }
};
/** The injected fetch sends the job. */
const injected = async () => {
  const urls: string[] = [];
  const counting = createAgentClient({
    fetch: (input, init) => {
      urls.push(input instanceof Request ? input.url : String(input));
      return fetch(input, init);
    },
  });
  await counting.echo({ text: "counted" });
  return urls;
};
/**
 * An async job whose handler fails with a 503 of its own (UnavailableError): that answer, at once (the default
 * retries, 3), not polled to the deadline plus a minute; each poll's status, as the fetch saw it.
 */
const unavailable = async () => {
  const polls: number[] = [];
  const watched = createAgentClient({
    fetch: async (input, init) => {
      const answer = await fetch(input, init);
      if (String(input instanceof Request ? input.url : input).includes("/jobs/")) polls.push(answer.status);
      return answer;
    },
  });
  const started = Date.now();
  const failed = await failure(() => watched.throws({ text: "unavailable" }, { async: true }));
  return { ...failed, ms: Date.now() - started, polls };
};
console.log(
  JSON.stringify({
    echo: { text, jobId: result.jobId, payment: result.payment ?? null },
    completedAt: result.completedAt,
    failure: await failure(() => agent.throws({ text: "validation" })),
    // The paid service's "wait", asked of the dev-mode service, which has no such capability.
    unknown: await failure(() => paidClient({ baseUrl: SERVICE.baseUrl ?? "" }).wait({ text: "x" })),
    late: await failure(() => agent.echo({ text: "x" }, { deadline: new Date(Date.now() - 5000) })),
    // Nothing listens on that port: one try and one retry, then a network error.
    down: await failure(() => createAgentClient({ baseUrl: process.argv[2] ?? "", retries: 1 }).echo({ text: "x" })),
    sent: await injected(),
    unavailable: await unavailable(),
    // An async job whose caller stops waiting (before its first poll): the error says where its answer is.
    stopped: await (async () => {
      try {
        await agent.echo({ text: "later" }, { async: true, signal: AbortSignal.timeout(600) });
        return null;
      } catch (error) {
        if (!(error instanceof AgentCallError)) throw error;
        return { errorType: error.errorType, queued: error.queued ?? null };
      }
    })(),
  }),
);
`;

const PAY_SCRIPT = `import { AgentCallError, createAgentClient } from "./paid-client.js";

const [baseUrl = "", capability = "", maxPrice = "", jobId = ""] = process.argv.slice(2);
const agent = createAgentClient({ baseUrl, ...(maxPrice ? { maxPrice } : {}) });
const call = capability === "wait" ? agent.wait : agent.echo;
try {
  const result = await call({ text: "paid" }, { jobId });
  console.log(JSON.stringify({ ok: true, jobId: result.jobId, output: result.output, payment: result.payment ?? null }));
} catch (error) {
  if (!(error instanceof AgentCallError)) throw error;
  console.log(JSON.stringify({ ok: false, errorType: error.errorType, status: error.status, message: error.message }));
}
`;
