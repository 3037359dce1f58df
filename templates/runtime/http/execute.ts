/**
 * POST /execute, the spec's job endpoint: the HTTP adapter of the job pipeline (jobs/pipeline.ts).
 * It reads the JSON body and the payment header (PAYMENT-SIGNATURE, or X-PAYMENT for x402 v1),
 * refuses new jobs while the server shuts down (503, Retry-After), notices a caller that hung up
 * (a paid job is then not settled), and writes the job's outcome as HTTP (answer.ts).
 * Part of your project: edit freely.
 */
import express from "express";
import { UnavailableError } from "../errors.js";
import type { PaymentChannel } from "../jobs/channel.js";
import { executeJob, type JobServices } from "../jobs/pipeline.js";
import { afterLogs } from "../ops/logger.js";
import type { PaymentGate } from "../payments/gate.js";
import type { Transport } from "../transport.js";
import type { Logger } from "../types.js";
import { httpAnswer, type HttpAnswer } from "./answer.js";
import { baseUrlOf } from "./base-url.js";
import { refuse, requireJson } from "./transport.js";

export const EXECUTE_PATH = "/execute";

/** Seconds a caller is asked to wait before retrying while the server is shutting down. */
const SHUTDOWN_RETRY_AFTER_SECONDS = 1;

/**
 * A job's answer, its body already serialized: written as Express's res.send writes JSON (same
 * headers), without parsing the Content-Type back or looking for an ETag on every job.
 */
function sendAnswer(res: express.Response, answer: HttpAnswer, sent: () => void): void {
  res.statusCode = answer.status;
  for (const name in answer.headers) res.setHeader(name, answer.headers[name]!);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(answer.body));
  // After the job's log line is written (see ops/logger.ts); `sent` once the answer is handed over.
  afterLogs(() => {
    try {
      res.end(answer.body);
    } catch {
      res.destroy(); // nothing else to tell a caller whose answer cannot be written
    } finally {
      sent();
    }
  });
}

/** POST /execute's payment channel: the PAYMENT-SIGNATURE (or X-PAYMENT) header. */
function headerChannel(gate: PaymentGate | undefined, req: express.Request): PaymentChannel {
  // Read once: every step of the job sees the same object (its JSON decoded once, payments/x402.ts).
  let sent: ReturnType<PaymentGate["paymentHeader"]> | null = null;
  return {
    sent: () => (sent === null ? (sent = gate?.paymentHeader((name) => req.get(name))) : sent),
    required: "payment required: send a PAYMENT-SIGNATURE header",
  };
}

/** Mounts POST /execute. */
export function mountExecute(app: express.Express, s: JobServices, logger: Logger): void {
  const jsonOnly = requireJson(logger);
  // Typed: tsc picks app.post's overload sooner (bench/typecheck.mjs).
  const json: express.RequestHandler = express.json({
    limit: s.config.maxBodyBytes,
    strict: false,
    type: () => true,
  });
  const open: express.RequestHandler = (req, res, next) => {
    if (!s.drain.stopping) return jsonOnly(req, res, next); // 415 unless the body says it is JSON
    res.set({ "Retry-After": String(SHUTDOWN_RETRY_AFTER_SECONDS), Connection: "close" });
    refuse(
      logger,
      req,
      res,
      new UnavailableError(
        "the server is shutting down and takes no new jobs; nothing was run or charged; send it again",
        SHUTDOWN_RETRY_AFTER_SECONDS,
      ),
    );
  };
  app.post(EXECUTE_PATH, open, json, async (req, res) => {
    // In flight until answered, even if the caller hung up: a shutdown waits for its settlement
    // and for the answer to be written.
    const leave = s.drain.enter();
    let answering = false;
    // The caller is gone once the connection closes before the answer was written: a paid job
    // then is not settled (jobs/paid.ts), its answer kept for an identical retry.
    const gone = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) gone.abort();
    });
    try {
      const call = {
        body: req.body as unknown,
        payment: headerChannel(s.gate, req),
        resourceUrl: () => `${baseUrlOf(s.config, req)}${EXECUTE_PATH}`, // throws a 400 for an invalid Host
        logger: logger.child({ request_id: res.locals.requestId, client: req.ip }),
        callerGone: gone.signal,
      };
      // Prefer: respond-async, with the `queue` feature: 202 and a job to poll (queue/accept.ts).
      const prefer = s.asyncJobs && req.get("prefer");
      const queued = prefer ? await s.asyncJobs!.accept(call, prefer) : undefined;
      sendAnswer(res, queued ?? httpAnswer(await executeJob(s, call), s.gate), leave);
      answering = true;
    } finally {
      if (!answering) leave();
    }
  });
}

/** POST /execute as a transport (transport.ts): the core one, always there, first in TRANSPORTS. */
export const EXECUTE_TRANSPORT: Transport = {
  name: "execute",
  routes: [{ path: EXECUTE_PATH, methods: "POST" }],
  mount: mountExecute,
};
