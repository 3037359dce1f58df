/** See workload.mjs. */
export function manyCapabilities(count: number): {
  name: string;
  version: string;
  capabilities: Record<string, unknown>;
};
