// regenerate() (behind `generate` and `generate --watch`) tells generateCode which handler files exist, so
// stubs that would only be kept are not built at all; a missing one is still written.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import * as generator from "../../src/generate/index.js";
import { regenerate } from "../../src/cli/generate.js";
import { scaffold } from "./helpers.js";

vi.mock("../../src/generate/index.js", async (importOriginal) => {
  const original = await importOriginal<typeof generator>();
  return { ...original, generateCode: vi.fn(original.generateCode) };
});

describe("regenerate", () => {
  it("passes the project's view of existing files, and writes only missing stubs", async () => {
    const dir = await scaffold(); // capabilities summarize and classify-review
    await rm(join(dir, "src/capabilities/classify-review.ts"));
    const spy = vi.mocked(generator.generateCode);
    spy.mockClear();

    const { report } = await regenerate(dir);

    expect(spy).toHaveBeenCalledTimes(1);
    const options = spy.mock.calls[0]![1];
    expect(options?.existing?.("src/capabilities/summarize.ts")).toBe(true);
    expect(options?.existing?.("src/capabilities/nope.ts")).toBe(false);
    const { files } = await spy.mock.results[0]!.value;
    const paths = files.map((f: { path: string }) => f.path);
    expect(paths).not.toContain("src/capabilities/summarize.ts");
    expect(paths).toContain("src/capabilities/classify-review.ts");
    expect(report.written).toEqual(["src/capabilities/classify-review.ts"]);
  });
});
