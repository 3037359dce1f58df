// The generated compose.yaml taking real payments: anvil with Circle's FiatTokenV2_2 on the host, listening
// on the docker bridge's gateway address (the one host address containers reach; not published beyond the
// host), direct settlement (X402_RPC_URL + X402_SETTLER_KEY in .env.production). One stack for the file:
// `create-agent smoke` from the host passes against it with the project's own settings and fails naming the
// field the seller expects otherwise; the same signed payment sent through the proxy to both instances at
// once runs one job and is charged once (Redis ledger); an instance stopped (SIGTERM) while paid jobs flow
// loses none: each is answered, or refused with a typed error and charged nothing.
import { execa } from "execa";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { runCli } from "../cli/call-helpers.js";
import { PAYEE, SETTLER_KEY } from "../chain/accounts.js";
import { type Anvil, startAnvil } from "../chain/anvil.js";
import { deployUsdc, mintUsdc, usdcBalance } from "../chain/usdc.js";
import { decodeHeader, payer, signPayment, type Requirement } from "../e2e/helpers.js";
import { type ComposeStack, composeUp } from "./compose-stack.js";
import { docker, job, logs } from "./docker.js";
import { paidLoad } from "./paid-load.js";

const ctx = inject("containers");
const OTHER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
let stack: ComposeStack;
let chain: Anvil | undefined;
let asset: `0x${string}` = "0x";

beforeAll(async () => {
  if (ctx.skip) return;
  // docker0's address: the host as every container sees it (through its network's gateway). Node's
  // networkInterfaces() omits docker0 while no container uses it, so ask iproute2.
  const ip = await execa("ip", ["-4", "-o", "addr", "show", "docker0"], { reject: false });
  const gateway = /inet (\d+\.\d+\.\d+\.\d+)\//.exec(ip.stdout ?? "")?.[1];
  if (!gateway)
    throw new Error(
      `no IPv4 address on docker0 (containers could not reach anvil): ${ip.all ?? ip.stderr}`,
    );
  chain = await startAnvil({ chainId: 84532, host: gateway });
  asset = await deployUsdc(chain.rpcUrl, { name: "USDC", version: "2" });
  await mintUsdc(chain.rpcUrl, asset, payer.address, 1_000_000_000n);
  stack = await composeUp(ctx, `cadeploypaid${process.pid}`, {
    PAY_TO: PAYEE,
    X402_NETWORK: "base-sepolia",
    X402_ASSET: asset,
    X402_ASSET_NAME: "USDC",
    X402_ASSET_VERSION: "2",
    X402_RPC_URL: chain.rpcUrl,
    X402_SETTLER_KEY: SETTLER_KEY,
  });
});
afterAll(async () => {
  if (ctx.skip) return;
  await stack?.down();
  await chain?.stop();
});

/** The project's smoke check from the host, in the clone, against the proxy's published port. */
const smoke = (args: string[], env: Record<string, string> = {}) =>
  runCli("smoke", [stack.base, "--settings", ".env.production", ...args], {
    cwd: ctx.cloneDir,
    env,
  });

it.skipIf(ctx.skip)(
  "smoke passes against the deployment with the project's own settings (.env.production)",
  async () => {
    const r = await smoke([]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ok +\/health: HTTP 200/m);
    expect(r.stdout).toContain("base-sepolia (eip155:84532) (X402_NETWORK (.env.production))");
    expect(r.stdout).toContain(`payTo: ${PAYEE} (PAY_TO (.env.production))`);
    expect(r.stdout).toMatch(/smoke: every check passed/);
  },
);

it.skipIf(ctx.skip)(
  "smoke fails, naming the field, when the seller expects another payee or network",
  async () => {
    const payee = await smoke([], { PAY_TO: OTHER });
    expect(payee.exitCode).not.toBe(0);
    expect(payee.stdout).toMatch(
      new RegExp(
        `^FAIL +402 offer .* payTo: ${PAYEE}, expected ${OTHER} \\(PAY_TO \\(the environment\\)\\)$`,
        "m",
      ),
    );
    const network = await smoke(["--network", "base"]);
    expect(network.exitCode).not.toBe(0);
    expect(network.stdout).toMatch(
      /^FAIL +402 offer network: base-sepolia \(eip155:84532\), expected base \(eip155:8453\) \(--network\)$/m,
    );
  },
);

it.skipIf(ctx.skip)(
  "one payment sent to both instances through the proxy runs once and is charged once",
  async () => {
    const body = JSON.stringify(job("paid-twice", "hello"));
    const headers = { "content-type": "application/json" };
    const offer = await fetch(`${stack.base}/execute`, { method: "POST", headers, body });
    expect(
      offer.status,
      `${await offer.clone().text()}\n${await logs(await stack.idOf("web1"))}`,
    ).toBe(402);
    const requirement = decodeHeader<{ accepts: Requirement[] }>(
      offer.headers.get("payment-required"),
    ).accepts[0]!;
    const payment = await signPayment(requirement, 84532);
    const before = await usdcBalance(chain!.rpcUrl, asset, PAYEE);
    const send = async () => {
      const res = await fetch(`${stack.base}/execute`, {
        method: "POST",
        headers: { ...headers, "payment-signature": payment },
        body,
      });
      return { status: res.status, text: await res.text() };
    };
    // Four at once: nginx spreads them over web1 and web2.
    const first = await Promise.all([send(), send(), send(), send()]);
    // Then the identical request again, once everything settled: the cached answer.
    const again = await send();
    const answered = [...first, again].filter((r) => r.status === 200);
    expect(answered.length, JSON.stringify(first)).toBeGreaterThanOrEqual(1);
    expect(again.status, again.text).toBe(200);
    // Every 200 is the same answer: one run (the handler puts its container's name in it).
    expect(new Set(answered.map((r) => JSON.parse(r.text).output.summary)).size).toBe(1);
    for (const r of first) if (r.status !== 200) expect(r.text).toMatch(/"status":"failed"/);
    // Both instances got the payment; the payee got the price once.
    for (const service of ["web1", "web2"])
      expect(await logs(await stack.idOf(service)), service).toMatch(/paid-twice/);
    const after = await usdcBalance(chain!.rpcUrl, asset, PAYEE);
    expect(after - before).toBe(BigInt(requirement.amount));
  },
);

it.skipIf(ctx.skip)(
  "an instance stopped while paid jobs flow: each is answered and charged once, or refused typed and not charged",
  async () => {
    const web1Id = await stack.idOf("web1");
    const web1 = web1Id.slice(0, 12);
    const before = await usdcBalance(chain!.rpcUrl, asset, PAYEE);
    const load = await paidLoad({
      base: stack.base,
      rpcUrl: chain!.rpcUrl,
      asset,
      jobs: 24,
      // SIGTERM (docker stop), given longer than the agent's drain: the slow jobs in flight finish there.
      midway: () => stack.run("stop", "-t", "45", "web1"),
    });
    // No request lost: each got a JSON answer (no reset connection, no proxy page).
    expect(load.lost, JSON.stringify(load.lost)).toEqual([]);
    for (const r of load.results) {
      if (r.status === 200) expect(r.body.status, r.jobId).toBe("completed");
      else
        expect(r.body, `${r.jobId} ${r.status}: ${JSON.stringify(r.body)}`).toMatchObject({
          status: "failed",
          error_type: expect.any(String),
        });
    }
    const delivered = load.results.filter((r) => r.status === 200);
    const drained = delivered.filter((r) => r.answeredBy === web1 && r.afterStop).length;
    console.log(
      `[containers] paid load: ${load.results.length} jobs, ${delivered.length} completed (${drained} by web1 while it drained), ${load.results.length - delivered.length} refused typed`,
    );
    // A job sent before the stop reached an instance still taking jobs: web1 finishes (drains) its own.
    for (const r of load.results.filter((r) => r.sentBeforeStop))
      expect(r.status, `${r.jobId}: ${JSON.stringify(r.body)}`).toBe(200);
    // Most were answered: only a request caught in web1's last instant may be refused (typed, retryable).
    expect(delivered.length).toBeGreaterThanOrEqual(load.results.length - 3);
    // Each payer charged the price exactly when it got its result, never for an error; the payee once each.
    for (const r of load.results)
      expect(r.charged, `${r.jobId} (${r.status}) charged`).toBe(r.status === 200 ? r.price : 0n);
    const gained = (await usdcBalance(chain!.rpcUrl, asset, PAYEE)) - before;
    expect(gained).toBe(delivered.reduce((sum, r) => sum + r.price, 0n));
    // web1 drained: the jobs it had in flight were answered by it, and it exited 0 (node got the SIGTERM).
    expect(await docker("inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", web1Id)).toBe(
      "exited 0",
    );
    expect(load.results.some((r) => r.answeredBy === web1 && r.afterStop)).toBe(true);
  },
);

if (ctx.skip) it("container tests", () => console.log(`container tests skipped: ${ctx.skip}`));
