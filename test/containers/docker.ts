// Helpers for the container tests: docker commands, a job request, waiting for a container's health.
import { setTimeout as sleep } from "node:timers/promises";
import { execa } from "execa";

/** Runs `docker <args>`; throws with its output when it fails. */
export async function docker(...args: string[]): Promise<string> {
  const r = await execa("docker", args, { reject: false, all: true });
  if (r.exitCode !== 0) throw new Error(`docker ${args.join(" ")}: ${r.all}`);
  return (r.stdout ?? "").trim();
}

/** Polls `check` every 500 ms until it returns true; throws `what` after `limitMs`. */
export async function waitFor(what: string, limitMs: number, check: () => Promise<boolean>) {
  const until = Date.now() + limitMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > until) throw new Error(`${what}: not within ${limitMs} ms`);
    await sleep(500);
  }
}

/** The container's health status (starting, healthy, unhealthy). */
export const health = (id: string) => docker("inspect", "-f", "{{.State.Health.Status}}", id);

/** Why a container is (un)healthy: its status and its last checks' times, exit codes and output. */
export async function healthLog(id: string): Promise<string> {
  const h = JSON.parse(
    (await docker("inspect", "-f", "{{json .State.Health}}", id).catch(() => "null")) || "null",
  ) as { Status: string; Log?: { Start: string; End: string; ExitCode: number; Output: string }[] };
  if (!h) return `${id.slice(0, 12)}: no health check`;
  const checks = (h.Log ?? []).map((c) => {
    const ms = Date.parse(c.End) - Date.parse(c.Start);
    return `  ${c.Start.slice(11, 23)} exit ${c.ExitCode} after ${ms} ms: ${c.Output.trim().slice(0, 200)}`;
  });
  return [`${id.slice(0, 12)}: ${h.Status}`, ...checks].join("\n");
}

/** Waits (up to `limitMs`) for the container to be healthy; throws with its last checks otherwise. */
export async function waitHealthy(id: string, limitMs: number): Promise<void> {
  await waitFor(
    `${id.slice(0, 12)} healthy`,
    limitMs,
    async () => (await health(id)) === "healthy",
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}\n${await healthLog(id)}`);
  });
}

/** A dev-mode job for the test project's `summarize` (its handler takes 4 s when text starts with "slow"). */
export function job(jobId: string, text: string) {
  return {
    service_version: "1.0",
    job_id: jobId,
    task: { capability: "summarize", input: { text } },
    deadline: Math.floor(Date.now() / 1000) + 120,
  };
}

/** POST /execute with `body`; the status and parsed answer. */
export async function execute(base: string, body: object) {
  const res = await fetch(`${base}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Everything a container printed (stdout and stderr). */
export async function logs(id: string): Promise<string> {
  const r = await execa("docker", ["logs", id], { reject: false, all: true });
  return r.all ?? "";
}
