// The queue worker's error line (queue/bullmq-queue.ts): BullMQ reports a Redis outage twice a second, so
// the same error is logged again only after a minute, saying how many repeats it left out.
import { afterEach, describe, expect, it, vi } from "vitest";
import { workerErrorLog } from "../../templates/runtime/queue/bullmq-queue.js";
import { captureLogger } from "./helpers.js";

afterEach(() => vi.useRealTimers());

describe("the queue worker's error line", () => {
  it("logs an error once a minute while it repeats, another error at once", () => {
    vi.useFakeTimers({ now: 0 });
    const logger = captureLogger();
    const log = workerErrorLog(logger);
    for (let i = 0; i < 130; i++) {
      log(new Error("connect ECONNREFUSED 127.0.0.1:6379"));
      vi.advanceTimersByTime(500);
    }
    log(new Error("could not renew lock for job job_1"));
    const logged = logger.lines.map((l) => [l.fields?.error, l.fields?.repeats_not_logged]);
    expect(logged).toEqual([
      ["Error: connect ECONNREFUSED 127.0.0.1:6379", undefined],
      ["Error: connect ECONNREFUSED 127.0.0.1:6379", 119],
      ["Error: could not renew lock for job job_1", undefined],
    ]);
  });
});
