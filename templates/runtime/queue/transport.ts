/**
 * Async jobs as a transport (transport.ts; the `queue` feature, listed in features.ts): GET
 * /jobs/<id> (poll.ts), and POST /execute's branch for `Prefer: respond-async` (RFC 7240), which
 * http/execute.ts takes through JobServices.asyncJobs. The queue and its worker (service.ts) are
 * loaded when the app is made; BullMQ only when REDIS_URL is set. Part of your project: edit freely.
 */
import type { Express } from "express";
import type { AsyncJobs, JobServices } from "../jobs/services.js";
import type { Transport } from "../transport.js";
import type { Logger } from "../types.js";
import type { AsyncJobsService } from "./service.js";
import { JOBS_PATH } from "./queue.js";

/** Whether a Prefer header (RFC 7240) asks for respond-async. */
export function prefersAsync(prefer: string): boolean {
  return prefer
    .split(",")
    .some((preference) => preference.split(";")[0]!.trim().toLowerCase() === "respond-async");
}

/** The agent card's extension for async jobs: RFC 7240's respond-async preference. */
export const ASYNC_EXTENSION_URI = "https://www.rfc-editor.org/rfc/rfc7240#section-4.1";

/** Headers a browser may read from a 202 and a poll's answer (besides the payment headers). */
const EXPOSED =
  "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, X-Request-Id, Retry-After, Location, Preference-Applied, Job-Status";

function mountJobs(app: Express, s: JobServices, logger: Logger): void {
  let loading: Promise<AsyncJobsService> | undefined;
  // Loaded on the first async job or poll; at once when this process works for a shared queue.
  const load = (): Promise<AsyncJobsService> =>
    (loading ??= import("./service.js").then(async (m) => {
      const service = await m.createAsyncJobs(s, logger);
      if (s.config.queue?.worker) await service.startWorker(s.config.queue.concurrency);
      return service;
    }));
  const jobs: AsyncJobs = {
    async accept(call, prefer) {
      if (!prefersAsync(prefer)) return undefined;
      const answer = await (await load()).accept(call);
      return {
        ...answer,
        headers: { ...answer.headers, "Access-Control-Expose-Headers": EXPOSED },
      };
    },
    enqueue: async (call) => (await load()).enqueue(call),
    state: async (id) => (await load()).state(id),
    cancel: async (id) => (await load()).cancel(id),
  };
  s.asyncJobs = jobs;
  // For npm run worker (worker-main.ts) and tests: the service, loaded now; undefined when never loaded.
  app.locals.asyncJobs = { load, loaded: () => loading };
  // A shared queue is loaded at once by a worker, and by an instance with metrics (its depth is Redis').
  if (s.config.redis && (s.config.queue?.worker || s.config.metrics))
    load().catch((err: unknown) =>
      logger.error(
        "job queue did not load: this instance runs no async job and reports no queue depth",
        {
          error: String(err),
        },
      ),
    );

  app.options(`${JOBS_PATH}/:id`, (_req, res) => {
    res.set({
      "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
      "Access-Control-Allow-Headers": "Authorization, X-Request-Id",
      "Access-Control-Max-Age": "600",
    });
    res.status(204).end();
  });
  app.get(`${JOBS_PATH}/:id`, async (req, res) => {
    const answer = await (await load()).poll(req.params.id, req.get("authorization"));
    res.status(answer.status).set(answer.headers).set("Access-Control-Expose-Headers", EXPOSED);
    res.type("application/json").send(answer.body);
  });
}

export const QUEUE_TRANSPORT: Transport = {
  name: "queue",
  routes: [{ path: `${JOBS_PATH}/:id`, methods: "GET, HEAD" }],
  mount: mountJobs,
  discovery: {
    openapiSchemas: ["JobPending"],
    cardExtension: (base) => ({
      uri: ASYNC_EXTENSION_URI,
      description: `Long jobs: POST the job to ${base}/execute with \`Prefer: respond-async\`: 202 Accepted with \`Location: /jobs/{id}\` and a \`job_token\`; poll GET ${base}${JOBS_PATH}/{id} with \`Authorization: Bearer <job_token>\` (honour Retry-After) until it is completed or failed (its \`Job-Status\` header says so; a 502/503/504 without it is an outage: poll again). Paid jobs are charged only on completion (EVM payments only).`,
      params: {
        prefer: "respond-async",
        poll: `${base}${JOBS_PATH}/{id}`,
        authorization: "Bearer <job_token>",
      },
    }),
    llms: () => [
      "Long job? Add `Prefer: respond-async`: 202, `Location`, `job_token`; poll `Location` with `Authorization: Bearer <job_token>`. Charged on completion (EVM only).",
    ],
  },
};
