// The benches' workload, shared with the generator tests.

/**
 * A manifest (as an object) of `count` capabilities, each with a few typical fields (nested object, enum,
 * array, bounds): what the regenerate and server-start benches generate, and the
 * generator tests' "many" stress manifest (test/generate/stress-manifests.ts). Plain JavaScript, so the
 * benches run it with node alone; its types are in workload.d.mts.
 */
export function manyCapabilities(count) {
  const capabilities = {};
  for (let i = 0; i < count; i++) {
    capabilities[`capability-${i}`] = {
      description: `Capability number ${i}`,
      pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
      input_schema: {
        text: { type: "string", required: true, minLength: 1, description: "The text to work on" },
        limit: { type: "integer", minimum: 1, default: 10 },
        mode: { type: "string", enum: ["fast", "careful"] },
        options: {
          type: "object",
          properties: {
            depth: { type: "integer" },
            tags: { type: "array", items: { type: "string" } },
          },
        },
      },
      output_schema: {
        result: { type: "string" },
        score: { type: "number", minimum: 0, maximum: 1 },
        labels: { type: "array", items: { type: "string", enum: ["a", "b", "c"] } },
      },
    };
  }
  return { name: "bench-agent", version: "1.0.0", capabilities };
}
