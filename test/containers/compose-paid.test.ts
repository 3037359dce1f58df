// The generated compose.yaml taking real payments: anvil with Circle's FiatTokenV2_2 on the host, listening
// on the docker bridge's gateway address (the one host address containers reach; not published beyond the
// host), direct settlement (X402_RPC_URL + X402_SETTLER_KEY in .env.production). The same signed payment
// sent through the proxy to both instances at once runs one job and is charged once (Redis ledger).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { PAYEE, SETTLER_KEY } from "../chain/accounts.js";
import { type Anvil, startAnvil } from "../chain/anvil.js";
import { deployUsdc, mintUsdc, usdcBalance } from "../chain/usdc.js";
import { decodeHeader, payer, signPayment, type Requirement } from "../e2e/helpers.js";
import { job, logs } from "./docker.js";

const ctx = inject("containers");
const project = `cadeploypaid${process.pid}`;
let base = "";
let chain: Anvil | undefined;
let asset: `0x${string}` = "0x";

async function compose(...args: string[]): Promise<string> {
  const r = await execa("docker", ["compose", "-p", project, ...args], {
    cwd: ctx.cloneDir,
    env: { AGENT_IMAGE: ctx.image, PROXY_BIND: "127.0.0.1:" },
    reject: false,
    all: true,
  });
  if (r.exitCode !== 0) throw new Error(`docker compose ${args.join(" ")}: ${r.all}`);
  return (r.stdout ?? "").trim();
}

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
  const settings = {
    PAY_TO: PAYEE,
    X402_NETWORK: "base-sepolia",
    X402_ASSET: asset,
    X402_ASSET_NAME: "USDC",
    X402_ASSET_VERSION: "2",
    X402_RPC_URL: chain.rpcUrl,
    X402_SETTLER_KEY: SETTLER_KEY,
  };
  await writeFile(
    join(ctx.cloneDir, ".env.production"),
    Object.entries(settings)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
  );
  await compose("build", "proxy");
  await compose("up", "-d", "--no-build", "--wait", "--wait-timeout", "240");
  base = `http://${await compose("port", "proxy", "8080")}`;
});
afterAll(async () => {
  if (ctx.skip) return;
  await compose("down", "-v").catch(() => undefined);
  await chain?.stop();
});

it.skipIf(ctx.skip)(
  "one payment sent to both instances through the proxy runs once and is charged once",
  async () => {
    const body = JSON.stringify(job("paid-twice", "hello"));
    const headers = { "content-type": "application/json" };
    const offer = await fetch(`${base}/execute`, { method: "POST", headers, body });
    expect(
      offer.status,
      `${await offer.clone().text()}\n${await logs(await compose("ps", "-q", "web1"))}`,
    ).toBe(402);
    const requirement = decodeHeader<{ accepts: Requirement[] }>(
      offer.headers.get("payment-required"),
    ).accepts[0]!;
    const payment = await signPayment(requirement, 84532);
    const before = await usdcBalance(chain!.rpcUrl, asset, PAYEE);
    const send = async () => {
      const res = await fetch(`${base}/execute`, {
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
      expect(await logs(await compose("ps", "-q", service)), service).toMatch(/paid-twice/);
    const after = await usdcBalance(chain!.rpcUrl, asset, PAYEE);
    expect(after - before).toBe(BigInt(requirement.amount));
  },
);

if (ctx.skip) it("container tests", () => console.log(`container tests skipped: ${ctx.skip}`));
