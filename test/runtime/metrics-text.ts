// What the metrics tests look for in a Prometheus text exposition (GET /metrics, or the registry's render()).
import { expect } from "vitest";

/** Each of `samples` (a sample line with its labels and value, or a # HELP / # TYPE line) is in `text`. */
export function expectSamples(text: string, samples: readonly string[]): void {
  for (const sample of samples) expect(text).toContain(sample);
}
