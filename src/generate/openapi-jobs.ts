/**
 * Async jobs in the OpenAPI document (openapi.ts; the `queue` feature, templates/runtime/queue/):
 * POST /execute's `Prefer: respond-async` and its 202, and GET /jobs/{id}, with their schemas
 * (JobAccepted, JobPending). The generated document has them; a server without the feature serves
 * no GET /jobs/{id}, so the runtime removes that path (and JobPending) from the document it serves.
 */
import { errorSchema, type Json, jsonContent, ref, SERVICE_VERSION } from "./openapi-parts.js";

/** queue/queue.ts JOBS_PATH, as an OpenAPI path. */
export const JOBS_PATH = "/jobs/{id}";

const jobStatus = (states: string[], description: string): Json => ({
  type: "string",
  enum: states,
  description,
});

export const JOB_SCHEMAS: Json = {
  JobAccepted: {
    type: "object",
    description:
      "An async job accepted (202): poll the `Location` header's URL with `Authorization: Bearer <job_token>`.",
    required: ["service_version", "job_id", "status", "job_token"],
    properties: {
      service_version: { type: "string", const: SERVICE_VERSION },
      job_id: { type: "string", description: "The request's job_id." },
      status: jobStatus(["queued"], "Waiting for a worker."),
      job_token: {
        type: "string",
        description:
          "The credential that reads the job (unguessable; only the holder of it can poll). Keep it secret.",
      },
    },
  },
  JobPending: {
    type: "object",
    description: "An async job not finished yet: poll again after `Retry-After` seconds.",
    required: ["service_version", "job_id", "status"],
    properties: {
      service_version: { type: "string", const: SERVICE_VERSION },
      job_id: { type: "string" },
      status: jobStatus(["queued", "running"], "Waiting for a worker, or running."),
    },
  },
};

/** POST /execute with the async preference: its header and its 202. */
export function withAsync(operation: Json): Json {
  const responses = operation.responses as Json;
  return {
    ...operation,
    parameters: [
      ...((operation.parameters as Json[] | undefined) ?? []),
      {
        name: "Prefer",
        in: "header",
        required: false,
        description:
          "`respond-async` (RFC 7240): a server with async jobs (GET /jobs/{id} in this document) answers 202 once the input, the payment and the deadline have been checked, and runs the job on its queue; the payment is settled only once the job completed with a valid output. Paid on EVM networks only. A server without async jobs ignores it.",
        schema: { type: "string", examples: ["respond-async"] },
      },
    ],
    responses: {
      "202": {
        description:
          "Accepted (Prefer: respond-async): nothing charged yet. `Location` is where to poll, `Preference-Applied: respond-async`.",
        headers: {
          Location: { schema: { type: "string" }, description: "/jobs/{id}" },
          "Preference-Applied": { schema: { type: "string", const: "respond-async" } },
          ...jobStatusHeader(["queued"]),
        },
        content: jsonContent(ref("JobAccepted")),
      },
      ...responses,
    },
  };
}

/** The security scheme of GET /jobs/{id}: the 202's job_token, sent as a bearer token. */
export const JOB_TOKEN_SCHEME = "jobToken";

export const jobTokenScheme = (): Json => ({
  type: "http",
  scheme: "bearer",
  description:
    "The `job_token` of the 202 that accepted the async job: `Authorization: Bearer <job_token>`. It reads that one job only; without it (or with another) the answer is 404.",
});

/** The header naming the job's state on every answer about it (templates/runtime/queue/poll.ts). */
const jobStatusHeader = (states: string[]): Json => ({
  "Job-Status": {
    schema: { type: "string", enum: states },
    description:
      "The job's state, as the body's `status` says. Absent on an answer that is not the job's (a 404, the queue unreachable, a proxy's page): a 502/503/504 without it is an outage, to poll again; one with it is the job's final answer.",
  },
});

/** GET /jobs/{id}: the job's state for the holder of its job_token. */
export function jobsPathItem(results: Json): Json {
  const failed = (description: string, final = true): Json => ({
    description,
    ...(final ? { headers: jobStatusHeader(["failed"]) } : {}),
    content: jsonContent(
      errorSchema(["validation", "payment", "deadline", "capability", "internal"]),
    ),
  });
  return {
    get: {
      tags: ["jobs"],
      operationId: "getJob",
      summary: "Poll an async job",
      // Nothing to pay: the job's own bearer token (its 202's job_token) reads it.
      security: [{ [JOB_TOKEN_SCHEME]: [] }],
      description:
        "Send `Authorization: Bearer <job_token>` (the 202's). While the job waits or runs: 200 with `status` `queued` or `running` and `Retry-After`. Then the answer POST /execute would have sent: 200 with the job result and the settlement receipt (`PAYMENT-RESPONSE` / `X-PAYMENT-RESPONSE`), or the error body with its status. Every answer about the job carries `Job-Status` (`queued`, `running`, `completed`, `failed`); a 502/503/504 without it (the queue unreachable, a proxy) is an outage: poll again after `Retry-After`. Answers are kept JOB_RESULT_TTL_SECONDS (default one day). Anyone without the token gets 404.",
      parameters: [
        {
          name: "id",
          in: "path",
          required: true,
          description: "The id in the 202's `Location`.",
          schema: { type: "string", pattern: "^job_[0-9a-f]{32}$" },
        },
      ],
      responses: {
        "200": {
          description: "Still queued or running (JobPending), or completed (the job result).",
          headers: {
            "Retry-After": { schema: { type: "integer" } },
            ...jobStatusHeader(["queued", "running", "completed"]),
          },
          content: jsonContent({ anyOf: [ref("JobPending"), results] }),
        },
        "402": failed("The payment could not be settled: nothing was charged."),
        "404": failed("No such job for this credential (or its answer expired).", false),
        "408": failed("The deadline passed (while queued or running): nothing was charged."),
        "500": failed("The handler failed or its output broke the schema: nothing was charged."),
        "503": {
          ...failed(
            "With `Job-Status: failed`, the job's own answer (its handler said a service it needs is unavailable): nothing was charged. Without it, the job queue is unreachable right now (`Retry-After`): the job is unaffected; poll again.",
            false,
          ),
          headers: {
            "Retry-After": { schema: { type: "integer" } },
            ...jobStatusHeader(["failed"]),
          },
        },
      },
    },
  };
}
