// `create-agent call`: the real CLI (node bin/create-agent.js) against real in-process servers made
// with createApp. Dev-mode servers run jobs for free; production servers answer 402 and are paid
// through the official x402 client (here with a recording settler: on-chain money is test/chain/).
import { writeFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lightTool, tempDir } from "./helpers.js";
import { ANVIL_KEY, PAY_TO, production, recordingSettler } from "../runtime/helpers.js";
import { explorerUrl, isLoopbackUrl } from "../../src/caller/payment.js";
import {
  callAgent,
  type CallAgent,
  type CountingServer,
  plainService,
  refusedBeforeSending,
  runCall,
  startCounted,
} from "./call-helpers.js";
import { buildCli } from "./client-project.js";

beforeAll(async () => {
  await buildCli();
}, 120_000);

/** The one JSON document on stdout (fails if there is anything else). */
const onlyJson = (stdout: string): any => {
  expect(stdout.trim().split("\n")).toHaveLength(1);
  return JSON.parse(stdout);
};

describe("a dev-mode service", () => {
  let agent: CallAgent;
  let server: CountingServer;
  beforeAll(async () => {
    agent = callAgent();
    server = await startCounted(agent);
  });
  afterAll(() => server.close());

  it("prints the output as JSON on stdout, says nothing was paid on stderr, exit 0", async () => {
    const r = await runCall([server.url, "echo", "--input", "message=hi"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(JSON.stringify({ text: "hi" }, null, 2));
    expect(r.stderr).toMatch(/nothing was paid/);
    expect(agent.seen.echo?.at(-1)).toEqual({ message: "hi", times: 1 });
  });

  it("--async: the job is queued (202), polled at its Location, and its output printed as usual", async () => {
    const r = await runCall([server.url, "echo", "--input", "message=later", "--async"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(JSON.stringify({ text: "later" }, null, 2));
    expect(r.stderr).toMatch(/queued by the service \(HTTP 202\); polling http:\S+\/jobs\/job_/);
    expect(r.stderr).not.toMatch(/job_token|Bearer/);
    expect(server.requests.some((q) => q.method === "GET" && q.path.startsWith("/jobs/job_"))).toBe(
      true,
    );
  });

  it("any of the service's URLs works (/about, /execute, a trailing slash)", async () => {
    for (const url of [`${server.url}/about`, `${server.url}/execute`, `${server.url}/`]) {
      const r = await runCall([url, "greet", "--input", "name=ann"]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ greeting: "hello ann" });
    }
  });

  it("--input values are typed by the declared field type", async () => {
    const r = await runCall([
      server.url,
      "echo",
      "--input",
      "message=a=b",
      "--input",
      "times=2",
      "--input",
      "loud=true",
      "--input",
      'tags=["x","y"]',
      "--input",
      'meta={"k":[1,{"z":null}]}',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: "A=BA=B" });
    expect(agent.seen.echo?.at(-1)).toEqual({
      message: "a=b",
      times: 2,
      loud: true,
      tags: ["x", "y"],
      meta: { k: [1, { z: null }] },
    });
  });

  it.each([
    [["times=two"], /--input times: "two" is not a number, and field "times" is an integer/],
    [["times="], /--input times: "" is not a number/],
    [["loud=yes"], /--input loud: "yes" is not a boolean; field "loud" takes true or false/],
    [
      ["tags=[x"],
      /--input tags: field "tags" is an array, so its value is JSON.*"\[x" is not valid JSON/,
    ],
    [["tags={}"], /--input tags: field "tags" is an array, but the JSON given is an object/],
    [["meta=[1]"], /--input meta: field "meta" is an object, but the JSON given is an array/],
    [["message"], /--input "message": write name=value/],
    [["message=a", "message=b"], /--input message: given more than once/],
  ])("a badly typed --input %j names the field, sends nothing", async (inputs, message) => {
    const r = await refusedBeforeSending(server, [
      "echo",
      ...inputs.flatMap((i) => ["--input", i]),
    ]);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("an unknown --input field is named, with the known fields and a did-you-mean", async () => {
    const r = await refusedBeforeSending(server, ["echo", "--input", "mesage=hi"]);
    expect(r.stderr).toContain(
      `--input mesage: "echo" has no input field "mesage" (its fields: message, times, loud, tags, meta); did you mean "message"?`,
    );
  });

  it("an unknown capability is named, with the capabilities the service has and a did-you-mean", async () => {
    const r = await refusedBeforeSending(server, ["ehco", "--input", "message=hi"]);
    expect(r.stderr).toContain(
      `call-test-agent (${server.url}) has no capability "ehco" (it has: echo, greet, refuse); did you mean "echo"?`,
    );
  });

  it("a URL alone: asks for the capability and lists them", async () => {
    const r = await runCall([server.url]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`create-agent call ${server.url} <capability>`);
    expect(r.stderr).toContain("has: echo, greet, refuse");
  });

  it("--json <file> is the input, --input values go on top; --json - reads stdin", async () => {
    const dir = await tempDir();
    const file = join(dir, "input.json");
    await writeFile(file, JSON.stringify({ message: "file", times: 2, tags: ["f"] }));
    const r = await runCall([server.url, "echo", "--json", file, "--input", "times=3"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: "filefilefile" }); // normal output mode
    expect(agent.seen.echo?.at(-1)).toEqual({ message: "file", times: 3, tags: ["f"] });

    const piped = await runCall([server.url, "echo", "--json", "-"], {
      input: '{"message":"piped"}',
    });
    expect(piped.exitCode, piped.stderr).toBe(0);
    expect(JSON.parse(piped.stdout)).toEqual({ text: "piped" });
  });

  it.each([
    ["missing.json", undefined, /--json .*missing\.json: cannot read the input file: no such file/],
    ["bad.json", "{nope", /--json .*bad\.json: not valid JSON/],
    ["list.json", "[1]", /--json .*list\.json: the input must be a JSON object .*not an array/],
  ])("--json %s that is unusable is named", async (name, content, message) => {
    const dir = await tempDir();
    if (content !== undefined) await writeFile(join(dir, name), content);
    const r = await refusedBeforeSending(server, ["echo", "--json", join(dir, name)]);
    expect(r.stderr).toMatch(message);
  });

  it("local validation failure: every problem as input.<field>, exit 1, nothing sent to /execute", async () => {
    const dir = await tempDir();
    const file = join(dir, "input.json");
    await writeFile(
      file,
      JSON.stringify({ times: 9, tags: ["a", "b", "c", "d"], colour: "red", lod: true }),
    );
    const seen = agent.seen.echo?.length ?? 0;
    const r = await refusedBeforeSending(server, ["echo", "--json", file]);
    expect(r.stdout).toBe("");
    const lines = r.stderr.split("\n").map((l) => l.trim());
    expect(lines).toContain("input.message: missing required field");
    expect(lines).toContain("input.colour: unknown field");
    expect(lines).toContain('input.lod: unknown field; did you mean "loud"?');
    expect(lines).toContain("input.times: must be <= 5");
    expect(lines).toContain("input.tags: must NOT have more than 3 items");
    expect(r.stderr).toMatch(/nothing was sent/);
    expect(agent.seen.echo?.length ?? 0).toBe(seen);
  });

  it("a value the server would coerce passes locally too (integer from a JSON string)", async () => {
    const dir = await tempDir();
    const file = join(dir, "input.json");
    await writeFile(file, JSON.stringify({ message: "c", times: "2" }));
    const r = await runCall([server.url, "echo", "--json", file]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: "cc" });
  });

  it("an error answer is printed as HTTP <status> <error_type>: <error>, exit 1", async () => {
    const r = await runCall([server.url, "refuse", "--input", "message=x"]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("HTTP 400 validation: message: the handler does not like it");
  });

  describe("--json without a file: machine mode", () => {
    it("success: exactly one JSON document with ok, job_id, capability, output, completed_at, payment", async () => {
      const r = await runCall([
        server.url,
        "echo",
        "--input",
        "message=m",
        "--job-id",
        "my-job-1",
        "--json",
      ]);
      expect(r.exitCode, r.stderr).toBe(0);
      const doc = onlyJson(r.stdout);
      expect(doc).toEqual({
        ok: true,
        job_id: "my-job-1",
        capability: "echo",
        output: { text: "m" },
        completed_at: expect.any(Number),
        payment: null,
      });
      expect(Math.abs(doc.completed_at - Date.now() / 1000)).toBeLessThan(60);
    });

    it("--job-id counts characters as the service does: 256 emoji are sent, 257 refused before sending", async () => {
      const jobId = "😀".repeat(256);
      const sent = await runCall([
        server.url,
        "greet",
        "--input",
        "name=x",
        "--job-id",
        jobId,
        "--json",
      ]);
      expect(sent.exitCode, sent.stderr).toBe(0);
      expect(onlyJson(sent.stdout).job_id).toBe(jobId);

      const before = server.executes();
      const r = await runCall([server.url, "greet", "--input", "name=x", "--job-id", `${jobId}😀`]);
      expect(r.exitCode).not.toBe(0);
      expect(r.stderr).toContain("--job-id: must be 1 to 256 characters");
      expect(server.executes()).toBe(before);
    });

    it("a generated job_id is call-<uuid>", async () => {
      const r = await runCall([server.url, "greet", "--input", "name=x", "--json"]);
      expect(onlyJson(r.stdout).job_id).toMatch(/^call-[0-9a-f-]{36}$/);
    });

    it.each<[string, string[], Record<string, unknown>]>([
      [
        "an error answer",
        ["refuse", "--input", "message=x"],
        {
          ok: false,
          status: 400,
          error_type: "validation",
          error: "message: the handler does not like it",
        },
      ],
      [
        "a local validation failure",
        ["echo", "--input", "times=7"],
        {
          ok: false,
          error_type: "validation",
          error: "input.message: missing required field; input.times: must be <= 5",
        },
      ],
      [
        "an unknown capability",
        ["nope"],
        { ok: false, error_type: "capability", error: expect.stringContaining('"nope"') },
      ],
      [
        "an unknown field",
        ["echo", "--input", "x=1"],
        { ok: false, error_type: "usage", error: expect.stringContaining("--input x") },
      ],
    ])("failure (%s): one JSON document, exit 1", async (_what, args, expected) => {
      const r = await runCall([server.url, ...args, "--json"]);
      expect(r.exitCode).toBe(1);
      expect(onlyJson(r.stdout)).toEqual(expected);
    });

    it("an unreachable service: ok false, error_type network", async () => {
      const r = await runCall(["http://127.0.0.1:9", "echo", "--json"]);
      expect(r.exitCode).toBe(1);
      expect(onlyJson(r.stdout)).toEqual({
        ok: false,
        error_type: "network",
        error: expect.stringContaining("cannot reach http://127.0.0.1:9/about"),
      });
    });
  });

  describe("without a URL", () => {
    const port = () => new URL(server.url).port;

    it("uses PORT from the environment", async () => {
      const r = await runCall(["greet", "--input", "name=env"], { env: { PORT: port() } });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ greeting: "hello env" });
    });

    it("else PORT from ./.env (the environment wins over it)", async () => {
      const dir = await tempDir();
      await writeFile(
        join(dir, ".env"),
        `# local settings\nSERVICE_DEV_MODE=true\nPORT=${port()}\n`,
      );
      const r = await runCall(["greet", "--input", "name=dotenv"], { cwd: dir });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ greeting: "hello dotenv" });

      const wins = await runCall(["greet", "--input", "name=x"], { cwd: dir, env: { PORT: "9" } });
      expect(wins.exitCode).toBe(1);
      expect(wins.stderr).toContain("cannot reach http://localhost:9/about");
    });

    it("nothing listening at the implied address: says where the address came from and how to start or name it", async () => {
      const free = createServer();
      await new Promise<void>((done) => free.listen(0, "127.0.0.1", done));
      const closed = String((free.address() as AddressInfo).port);
      await new Promise((done) => free.close(done));
      const r = await runCall(["greet", "--input", "name=x"], { env: { PORT: closed } });
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain(`cannot reach http://localhost:${closed}/about: ECONNREFUSED`);
      expect(r.stderr).toContain(
        "nothing listens there (the address comes from PORT): start the service (in its project: npm run dev)",
      );
      // A URL the command line gave is reported as it is.
      const named = await runCall([`http://127.0.0.1:${closed}`, "greet", "--input", "name=x"]);
      expect(named.stderr).toContain("ECONNREFUSED");
      expect(named.stderr).not.toContain("nothing listens there");
    });

    it("AGENT_URL wins over PORT, and may be any of the service's URLs", async () => {
      const r = await runCall(["greet", "--input", "name=url"], {
        env: { AGENT_URL: `${server.url}/about`, PORT: "9" },
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ greeting: "hello url" });
    });

    it("else http://localhost:3000", async () => {
      const dir = await tempDir();
      const r = await runCall(["greet", "--json"], { cwd: dir });
      // Whatever runs on port 3000 here (usually nothing), that is where it went.
      const doc = onlyJson(r.stdout);
      if (!doc.ok && doc.error_type === "network")
        expect(doc.error).toContain("http://localhost:3000/about");
      else expect(r.stderr + r.stdout).not.toContain("localhost:9");
    });

    it("a PORT that is not a port number is named", async () => {
      const r = await runCall(["greet"], { env: { PORT: "abc" } });
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain('PORT in the environment is "abc", not a port number');
    });
  });

  it.each([
    [["--max-price", "abc"], /--max-price: amount "abc" is not a decimal number/],
    [["--max-price", "0.0000001"], /--max-price: amount "0.0000001" has 7 decimal places/],
    [
      ["--deadline-seconds", "0"],
      /--deadline-seconds: "0" is not a whole number of seconds above 0/,
    ],
    [["--deadline-seconds", "1.5"], /--deadline-seconds: "1.5" is not a whole number/],
    [["--asset", "0xzz"], /--asset: "0xzz" is not a token address/],
  ])("%j is refused with its flag named", async (flags, message) => {
    const before = server.requests.length;
    const r = await runCall([server.url, "greet", "--input", "name=x", ...flags]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(server.requests.length).toBe(before);
  });

  it("--max-price below the declared price refuses before sending anything", async () => {
    const r = await refusedBeforeSending(server, [
      "echo",
      "--input",
      "message=x",
      "--max-price",
      "0.009999",
    ]);
    expect(r.stderr).toContain(
      '"echo" costs 0.01 USDC per job, more than --max-price 0.009999; nothing was sent',
    );
    // At or above the price it goes through (a dev-mode server then charges nothing).
    const ok = await runCall([server.url, "echo", "--input", "message=x", "--max-price", "0.01"]);
    expect(ok.exitCode, ok.stderr).toBe(0);
  });
});

describe("a production service (402)", () => {
  let agent: CallAgent;
  let server: CountingServer;
  let settler: ReturnType<typeof recordingSettler>;
  beforeAll(async () => {
    agent = callAgent({ greedy: true, unavailable: true });
    settler = recordingSettler();
    server = await startCounted(agent, production(settler));
  });
  afterAll(() => server.close());

  it("without X402_PAYER_KEY: says so, names the variable, signs nothing, runs nothing", async () => {
    const before = { all: server.executes(), paid: server.paidExecutes() };
    const r = await runCall([server.url, "echo", "--input", "message=x"]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("X402_PAYER_KEY is not set");
    expect(r.stderr).toContain("asks 0.01 USDC");
    expect(r.stderr).toContain("nothing was signed");
    expect(server.executes()).toBe(before.all + 1); // the one unpaid request that got the 402
    expect(server.paidExecutes()).toBe(before.paid);
    expect(agent.seen.echo ?? []).toHaveLength(0);
  });

  it("a malformed X402_PAYER_KEY is refused without showing any of it", async () => {
    const key = `0x${"ab".repeat(31)}cd9`; // 65 hex digits
    const before = server.paidExecutes();
    const r = await runCall([server.url, "echo", "--input", "message=x", "--json"], {
      env: { X402_PAYER_KEY: key },
    });
    expect(r.exitCode).toBe(1);
    const doc = onlyJson(r.stdout);
    expect(doc).toMatchObject({ ok: false, error_type: "payment" });
    expect(doc.error).toContain("X402_PAYER_KEY is not a private key");
    for (const text of [r.stdout, r.stderr]) {
      expect(text).not.toContain("abab");
      expect(text).not.toContain("cd9");
    }
    expect(server.paidExecutes()).toBe(before);
  });

  it("a 402 asking more than /about declares is refused, nothing signed", async () => {
    const before = server.paidExecutes();
    const r = await runCall([server.url, "greedy", "--input", "message=x"], {
      env: { X402_PAYER_KEY: ANVIL_KEY },
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(
      `asks 0.02 USDC, more than the 0.01 USDC its /about declares for "greedy" (a service asking more than it declares is refused); nothing was signed`,
    );
    expect(server.paidExecutes()).toBe(before);
    expect(settler.calls).toHaveLength(0);
  });

  it("--max-price below the price: refused before anything is sent", async () => {
    const r = await refusedBeforeSending(
      server,
      ["echo", "--input", "message=x", "--max-price", "0.005"],
      { env: { X402_PAYER_KEY: ANVIL_KEY } },
    );
    expect(r.stderr).toContain("more than --max-price 0.005; nothing was sent");
  });

  it("pays with the official x402 client: one signed request, output on stdout, receipt on stderr", async () => {
    const before = { paid: server.paidExecutes(), settled: settler.settled() };
    const r = await runCall(
      [server.url, "echo", "--input", "message=paid", "--max-price", "0.01"],
      {
        env: { X402_PAYER_KEY: ANVIL_KEY },
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: "paid" });
    expect(server.paidExecutes()).toBe(before.paid + 1);
    expect(settler.settled()).toBe(before.settled + 1);
    const payment = settler.calls.at(-1)!.payment;
    expect(payment).toMatchObject({ amount: "10000", network: "eip155:84532" });
    const tx = /transaction: (0x[0-9a-f]{64})/.exec(r.stderr)?.[1];
    expect(tx, r.stderr).toBeDefined();
    expect(r.stderr).toContain("paid 0.01 USDC on eip155:84532");
    // The agent runs on this machine: its chain may be a local one (dev:paid's), so no public explorer link.
    expect(r.stderr).not.toContain("basescan");
    expect(r.stderr).toContain(
      "explorer:    none: the agent runs on this machine, so its chain may be a local one (dev:paid's)",
    );
    expect(r.stderr).not.toContain(ANVIL_KEY.slice(2, 12));
    expect(PAY_TO).toBeTruthy();
  });

  it("--async: a job that fails with a 503 of its own (UnavailableError) is its answer at once, not polled to its deadline; nothing charged", async () => {
    const before = { settled: settler.settled(), runs: agent.seen.unavailable?.length ?? 0 };
    const polls = () =>
      server.requests.filter((q) => q.method === "GET" && q.path.startsWith("/jobs/"));
    const pollsBefore = polls().length;
    const started = Date.now();
    const r = await runCall(
      [server.url, "unavailable", "--input", "message=x", "--async", "--json"],
      { env: { X402_PAYER_KEY: ANVIL_KEY } },
    );
    // Polled to the deadline (300 s) plus the margin without the fix: runCall gives up at 60 s.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/queued by the service \(HTTP 202\)/);
    expect(onlyJson(r.stdout)).toEqual({
      ok: false,
      status: 503,
      error_type: "internal",
      error: "the upstream model is down: try again later",
    });
    expect(agent.seen.unavailable).toHaveLength(before.runs + 1);
    // The job's 503 (Job-Status: failed) ended polling: not asked again and again.
    expect(polls().length - pollsBefore).toBeLessThanOrEqual(2);
    expect(settler.settled()).toBe(before.settled);
  });

  it("machine mode reports the payment", async () => {
    const r = await runCall([server.url, "greet", "--input", "name=m", "--json"], {
      env: { X402_PAYER_KEY: ANVIL_KEY },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const doc = onlyJson(r.stdout);
    expect(doc).toEqual({
      ok: true,
      job_id: expect.stringMatching(/^call-/),
      capability: "greet",
      output: { greeting: "hello m" },
      completed_at: expect.any(Number),
      payment: {
        transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        network: "eip155:84532",
        payer: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        amount: "0.002",
        currency: "USDC",
        asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        localAgent: true,
      },
    });
  });

  it("an x402 v1 server (402 body only, X-PAYMENT): paid too, receipt from X-PAYMENT-RESPONSE", async () => {
    const v1Settler = recordingSettler();
    const v1 = await startCounted(callAgent(), production(v1Settler), { v1Only: true });
    try {
      const r = await runCall([v1.url, "greet", "--input", "name=v1", "--json"], {
        env: { X402_PAYER_KEY: ANVIL_KEY },
      });
      expect(r.exitCode, r.stderr).toBe(0);
      const doc = onlyJson(r.stdout);
      expect(doc.output).toEqual({ greeting: "hello v1" });
      expect(doc.payment).toEqual({
        transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        network: "base-sepolia",
        payer: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        amount: "0.002",
        currency: "USDC",
        asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        localAgent: true,
      });
      expect(v1Settler.calls.at(-1)?.payment).toMatchObject({ x402Version: 1, amount: "2000" });
      expect(v1.paidExecutes()).toBe(1);
    } finally {
      await v1.close();
    }
  });

  it("without the x402 packages (the light install): installs them on first use, saying so; when that fails, the exact install command, nothing signed", async () => {
    const tool = await lightTool();
    const before = server.paidExecutes();
    // The first-use install cannot reach a registry here (none answers, an empty npm cache): it fails fast.
    const r = await runCall([server.url, "echo", "--input", "message=x"], {
      cli: join(tool, "bin/create-agent.js"),
      env: {
        X402_PAYER_KEY: ANVIL_KEY,
        npm_config_registry: "http://127.0.0.1:9/",
        npm_config_cache: join(await tempDir(), "npm-cache"),
        npm_config_fetch_retries: "0",
      },
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(
      `First use: installing the official x402 client (@x402/fetch@2.27.0, @x402/evm@2.27.0, viem@2.57.1, @x402/core@2.27.0) into ${join(tool, "node_modules/.cache/create-agent-x402")}`,
    );
    expect(r.stderr).toContain("is not installed; nothing was signed");
    expect(r.stderr).toContain(
      `cd ${tool} && npm install --no-save @x402/fetch@2.27.0 @x402/evm@2.27.0 viem@2.57.1 @x402/core@2.27.0`,
    );
    expect(r.stderr).toMatch(/dev mode need none of it/);
    expect(server.paidExecutes()).toBe(before);

    // The same light install calls a dev-mode service without them.
    const dev = await startCounted(callAgent());
    try {
      const ok = await runCall([dev.url, "greet", "--input", "name=light"], {
        cli: join(tool, "bin/create-agent.js"),
      });
      expect(ok.exitCode, ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout)).toEqual({ greeting: "hello light" });
    } finally {
      await dev.close();
    }
  });
});

describe("explorer links of a receipt", () => {
  it("a public network's transaction gets one; an agent on this machine (dev:paid's local chain) does not", () => {
    const tx = `0x${"ab".repeat(32)}`;
    expect(explorerUrl("eip155:84532", tx)).toBe(`https://sepolia.basescan.org/tx/${tx}`);
    for (const url of [
      "http://localhost:3000/execute",
      "http://127.0.0.1:8/x",
      "http://[::1]:3000/",
    ])
      expect(isLoopbackUrl(url), url).toBe(true);
    for (const url of ["https://agent.example.com/execute", "http://10.0.0.2:3000/", "nonsense"])
      expect(isLoopbackUrl(url), url).toBe(false);
  });
});

describe("a service declaring a price above 1 USDC", () => {
  it("is not paid without --max-price (a mistyped or hostile URL sets its own price); with it the job goes", async () => {
    const stop = { status: "failed", error_type: "internal", error: "stop here" };
    const service = await plainService("pricey", "2.5", () => ({ status: 500, body: stop }));
    try {
      const refused = await runCall([service.url, "pricey", "--input", "text=x"]);
      expect(refused.exitCode).toBe(1);
      expect(refused.stderr).toContain(
        '"pricey" costs 2.5 USDC per job, more than call pays without --max-price (1 USDC, as the x402 client\'s default cap): pass --max-price 2.5 to pay it; nothing was sent',
      );
      expect(service.posts).toEqual([]);
      const allowed = await runCall([
        service.url,
        "pricey",
        "--input",
        "text=x",
        "--max-price",
        "2.5",
      ]);
      expect(allowed.stderr).toContain("stop here");
      expect(service.posts).toEqual(["/execute"]);
    } finally {
      await service.close();
    }
  });
});

describe("call --async when the user stops waiting", () => {
  it("Ctrl-C prints how to fetch the answer later (token quoted for the shell) and exits 130", async () => {
    const token = "t'k; echo pwned";
    const service = await plainService("work", "0.01", (req) =>
      req.method === "POST"
        ? {
            status: 202,
            headers: { location: "/jobs/j1" },
            body: { job_id: "j1", status: "queued", job_token: token },
          }
        : { status: 200, body: { job_id: "j1", status: "running" } },
    );
    try {
      const child = runCall([service.url, "work", "--input", "text=x", "--async"]);
      let stderr = "";
      child.stderr?.on("data", function stop(chunk: Buffer) {
        stderr += chunk.toString();
        if (!stderr.includes("Ctrl-C prints how to fetch")) return;
        child.stderr?.off("data", stop);
        process.kill(child.pid!, "SIGINT"); // as a terminal's Ctrl-C (execa's kill() counts as its own)
      });
      const r = await child;
      expect(r.exitCode, r.stderr).toBe(130);
      expect(r.stderr).toContain("stopped waiting. job j1 still runs. Fetch its answer");
      expect(r.stderr).toContain(
        `curl -H 'authorization: Bearer t'\\''k; echo pwned' ${service.url}/jobs/j1`,
      );
      // Dev mode (no payment went with it): no word of a charge.
      expect(r.stderr).not.toContain("charged");
    } finally {
      await service.close();
    }
  });
});
