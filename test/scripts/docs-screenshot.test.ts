// The tool's README shows the console page (docs/console.png), taken in headless Chromium by
// test/e2e/console.test.ts after a paid job (UPDATE_SCREENSHOTS=1 writes it again). This checks the README
// links the picture and that it is a real PNG of a page's size, not an empty or broken file.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const PNG = join(ROOT, "docs/console.png");

describe("docs/console.png", () => {
  it("the README shows it in its console section", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const console = readme.slice(readme.indexOf("### The console page"));
    expect(console).toMatch(/^!\[[^\]]+\]\(docs\/console\.png\)$/m);
  });

  it("is a PNG of a page's size: 900 pixels wide, a card tall, tens of KB", () => {
    const bytes = readFileSync(PNG);
    expect(bytes.subarray(0, 8)).toEqual(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
    expect(bytes.toString("latin1", 12, 16)).toBe("IHDR");
    const [width, height] = [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
    expect(width).toBe(900);
    expect(height).toBeGreaterThan(500);
    expect(height).toBeLessThan(2500);
    expect(statSync(PNG).size).toBeGreaterThan(20_000);
    expect(statSync(PNG).size).toBeLessThan(600_000);
  });
});
