// runWithDeadline with real timers (short deadlines), plus the timer chaining for far deadlines.
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  MAX_TIMER_DELAY_MS,
  deadlinePassed,
  onDeadline,
  runWithDeadline,
} from "../../templates/runtime/jobs/deadline.js";
import { DeadlineError } from "../../templates/runtime/errors.js";

const soon = (ms: number): number => (Date.now() + ms) / 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterEach(() => {
  vi.useRealTimers();
});

describe("deadlinePassed", () => {
  it("compares Unix seconds with now", () => {
    expect(deadlinePassed(10, 10_000)).toBe(true);
    expect(deadlinePassed(10.5, 10_000)).toBe(false);
    expect(deadlinePassed(Date.now() / 1000 - 1)).toBe(true);
  });
});

describe("runWithDeadline", () => {
  it("returns the work's result and leaves the signal alone", async () => {
    let signal: AbortSignal | undefined;
    const value = await runWithDeadline(soon(1000), async (s) => {
      signal = s;
      return 42;
    });
    expect(value).toBe(42);
    await sleep(20);
    expect(signal?.aborted).toBe(false);
  });

  it("passes the work's own rejection through", async () => {
    await expect(
      runWithDeadline(soon(1000), async () => Promise.reject(new Error("mine"))),
    ).rejects.toThrow("mine");
    await expect(
      runWithDeadline(soon(1000), () => {
        throw new Error("sync");
      }),
    ).rejects.toThrow("sync");
  });

  it("aborts the signal with a DeadlineError and rejects with it", async () => {
    let signal: AbortSignal | undefined;
    const run = runWithDeadline(soon(300), (s) => {
      signal = s;
      return new Promise<never>(() => {});
    });
    const err = await run.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeadlineError);
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBe(err);
  });

  it("rejects at the deadline even when the work ignores the signal, and a late rejection is not unhandled", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      let settledLate = false;
      const run = runWithDeadline(soon(200), async () => {
        await sleep(500);
        settledLate = true;
        throw new Error("late failure");
      });
      await expect(run).rejects.toBeInstanceOf(DeadlineError);
      expect(settledLate).toBe(false);
      await sleep(500);
      expect(settledLate).toBe(true);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("a deadline in the past rejects right away", async () => {
    await expect(
      runWithDeadline(Date.now() / 1000 - 10, () => new Promise(() => {})),
    ).rejects.toBeInstanceOf(DeadlineError);
  });

  it("a deadline beyond 2^31-1 ms does not fire early (real timers)", async () => {
    const far = soon(MAX_TIMER_DELAY_MS + 60_000);
    await expect(
      runWithDeadline(far, async () => {
        await sleep(100);
        return "ok";
      }),
    ).resolves.toBe("ok");
  });
});

describe("onDeadline timer chaining", () => {
  it("waits through several maximal timers and fires at the deadline, not before", () => {
    vi.useFakeTimers({ now: 0 });
    const fire = vi.fn();
    const at = 2 * MAX_TIMER_DELAY_MS + 5_000;
    onDeadline(at, fire);
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(4_999);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fire).toHaveBeenCalledTimes(1);
  });

  it("cancel stops it", () => {
    vi.useFakeTimers({ now: 0 });
    const fire = vi.fn();
    const cancel = onDeadline(1000, fire);
    cancel();
    vi.advanceTimersByTime(5000);
    expect(fire).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });
});
