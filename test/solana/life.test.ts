// The Solana deadline rule at its boundary: the server and the payers agree on 30 s.
import { describe, expect, it } from "vitest";
import { SOLANA_MAX_DEADLINE_SECONDS } from "../../src/caller/guard-svm.js";
import { solanaDeadlineProblem } from "../../templates/runtime/payments/svm/life.js";

describe("which jobs Solana can pay for", () => {
  const now = 1_800_000_000_000;
  it("takes a job due in 30 s, the payers' limit", () => {
    expect(SOLANA_MAX_DEADLINE_SECONDS).toBe(30);
    expect(solanaDeadlineProblem(now / 1000 + SOLANA_MAX_DEADLINE_SECONDS, now)).toBeUndefined();
    expect(solanaDeadlineProblem(now / 1000 + 1, now)).toBeUndefined();
  });
  it("refuses a job due in 31 s, naming the limit", () => {
    expect(solanaDeadlineProblem(now / 1000 + 31, now)).toMatch(
      /deadline is 31 s away.*Solana pays only for jobs due within 30 s/,
    );
  });
});
