/**
 * Example job requests and results built from the discovery data's example input and output: the
 * agent card's skill examples, the Bazaar extension in a 402 and llms.txt show the same ones.
 * Part of your project: edit freely.
 */
import { SERVICE_VERSION } from "../jobs/request.js";
import type { CapabilityDiscovery, JsonObject } from "./data.js";

/** The job_id the examples use; callers choose their own (it is echoed in the result). */
export const EXAMPLE_JOB_ID = "job-0001";

/** A job's `task` (spec 2.3) for `capability` with its example input. */
export function exampleTask(capability: string, discovery: CapabilityDiscovery) {
  return { capability, input: discovery.exampleInput };
}

/** A complete job request body (spec 2.3) due at `deadline` (Unix seconds). */
export function exampleJobRequest(
  capability: string,
  discovery: CapabilityDiscovery,
  deadline: number,
): JsonObject {
  return {
    service_version: SERVICE_VERSION,
    job_id: EXAMPLE_JOB_ID,
    task: exampleTask(capability, discovery),
    deadline,
  };
}

/** The job result (spec 2.4) the example request gets, completed at `completedAt` (Unix seconds). */
export function exampleJobResult(discovery: CapabilityDiscovery, completedAt: number): JsonObject {
  return {
    service_version: SERVICE_VERSION,
    job_id: EXAMPLE_JOB_ID,
    status: "completed",
    output: discovery.exampleOutput,
    completed_at: completedAt,
  };
}
