/** Polling an async job (GET /jobs/<id>) as a payer does, and reading its metrics: shared by the runtime and chain async-job tests. */

/** One GET of the job's Location, with its credential (when given). */
export async function poll(url: string, location: string, token?: string) {
  const res = await fetch(`${url}${location}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** Polls every `everyMs` until the job is no longer queued or running (at most `ms`). */
export async function finished(
  url: string,
  location: string,
  token: string,
  ms: number,
  everyMs: number,
) {
  const until = Date.now() + ms;
  for (;;) {
    const answer = await poll(url, location, token);
    if (!(answer.status === 200 && ["queued", "running"].includes(answer.body.status)))
      return answer;
    if (Date.now() > until) throw new Error(`still ${answer.body.status} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** GET /metrics on the main port (METRICS_TOKEN set to `token`): the Prometheus text. */
export async function scrape(url: string, token: string): Promise<string> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
  return res.text();
}
