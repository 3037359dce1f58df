/**
 * POST /execute in the OpenAPI document (openapi.ts): the job request, its examples for every capability,
 * and every answer the runtime gives it (200 with the receipt headers, 402 with the payment requirements,
 * and each error status with its error types and an example).
 */
import type { AgentModel, CapabilityModel } from "../manifest/model.js";
import type { CapabilitySamples } from "./openapi.js";
import {
  DEFAULT_MAX_BODY_BYTES,
  errorBody,
  errorSchema,
  example,
  EXAMPLE,
  GENERIC_INTERNAL_MESSAGE,
  headerRef,
  type Json,
  jsonContent,
  MAX_NESTING_DEPTH,
  PAYMENT_SCHEMES,
  priceText,
  ref,
  SERVICE_VERSION,
} from "./openapi-parts.js";
import { paymentResponses } from "./openapi-x402.js";

/** A name that no capability has, for the unknown-capability example. */
function unknownCapabilityName(model: AgentModel): string {
  const names = new Set(model.capabilities.map((c) => c.name));
  let name = "no-such-capability";
  while (names.has(name)) name += "-x";
  return name;
}

/** The CapabilityError message of jobs/request.ts findCapability. */
function unknownCapabilityMessage(model: AgentModel, name: string): string {
  const names = model.capabilities.map((c) => c.name);
  const listed = names.slice(0, 50).map((n) => JSON.stringify(n));
  if (names.length > listed.length) listed.push(`and ${names.length - listed.length} more`);
  return `unknown capability ${JSON.stringify(name)}; available: ${listed.length > 0 ? listed.join(", ") : "(none)"}`;
}

export function executeOperation(
  model: AgentModel,
  sampleOf: (c: CapabilityModel) => CapabilitySamples,
): Json {
  const caps = model.capabilities;
  const deadline = EXAMPLE.now + 60;
  const requestExamples = Object.fromEntries(
    caps.map((c) => [
      c.name,
      example(
        `${c.name} (${priceText(c)})`,
        jobBody(c, sampleOf, deadline),
        "`deadline` is a Unix time in seconds a little ahead of now (for example now + 60).",
      ),
    ]),
  );
  const requestId = { "X-Request-Id": headerRef("X-Request-Id") };

  return {
    tags: ["jobs"],
    operationId: "executeJob",
    summary: "Run a job",
    // Either payment header pays (spec section 5: the payment is the credential for /execute).
    security: [{ [PAYMENT_SCHEMES.v2]: [] }, { [PAYMENT_SCHEMES.v1]: [] }],
    description: [
      "Runs one job of the capability named in `task.capability`: the request is checked, then the input " +
        "against the capability's input schema (scalar values are coerced where the schema allows, and " +
        "defaults filled in), then the payment, then the deadline; the handler runs until the deadline, " +
        "and its output is checked against the output schema before anything is charged.",
      "",
      "Payment (x402, USDC, scheme `exact`): send `PAYMENT-SIGNATURE` (x402 v2) or `X-PAYMENT` (v1). " +
        "Without either the answer is 402 with the payment requirements: in the body for v1 clients, in " +
        "the `PAYMENT-REQUIRED` header for v2 clients. A payment pays for one job only, and is settled " +
        "only once the job has succeeded. A server in dev mode skips the payment entirely.",
      "",
      `Bodies are nested at most ${MAX_NESTING_DEPTH} levels deep, and are at most 1 MiB by default (MAX_BODY_BYTES).`,
    ].join("\n"),
    requestBody: {
      required: true,
      description:
        "A job request (spec 2.3). The request schemas differ only in `task.capability` (a `const`) and the `task.input` that goes with it.",
      // One schema per capability, told apart by task.capability's `const`: plain JSON Schema. OpenAPI's
      // `discriminator` cannot point into a nested property (task.capability), so there is none.
      content: jsonContent(
        caps.length > 0 ? { oneOf: caps.map((c) => ref(`${c.typeName}JobRequest`)) } : { not: {} },
        requestExamples,
      ),
    },
    responses: {
      ...completedResponse(caps, sampleOf, requestId),
      ...requestErrorResponses(model, requestId),
      ...paymentResponses(caps, requestId),
      ...deadlineResponses(deadline, requestId),
      ...serverErrorResponses(requestId),
    },
    "x-x402": {
      scheme: "exact",
      currency: "USDC",
      prices: Object.fromEntries(caps.map((c) => [c.name, c.declaration.pricing.amount])),
    },
  };
}

type Headers = Record<string, Json>;

/** The job request of a capability's example. */
function jobBody(
  c: CapabilityModel,
  sampleOf: (c: CapabilityModel) => CapabilitySamples,
  deadline: number,
): Json {
  return {
    service_version: SERVICE_VERSION,
    job_id: EXAMPLE.jobId,
    task: { capability: c.name, input: sampleOf(c).input },
    deadline,
  };
}

/** 200: the job's result, with the receipt headers; one example per capability. */
function completedResponse(
  caps: CapabilityModel[],
  sampleOf: (c: CapabilityModel) => CapabilitySamples,
  requestId: Headers,
): Json {
  const resultExamples = Object.fromEntries(
    caps.map((c) => [
      c.name,
      example(c.name, {
        service_version: SERVICE_VERSION,
        job_id: EXAMPLE.jobId,
        status: "completed",
        output: sampleOf(c).output,
        completed_at: EXAMPLE.now + 2,
      }),
    ]),
  );
  return {
    "200": {
      description:
        "The job completed (spec 2.4). A paid job's answer carries the settlement receipt: `PAYMENT-RESPONSE` for x402 v2 clients, `X-PAYMENT-RESPONSE` for v1; dev mode sends neither.",
      headers: {
        "PAYMENT-RESPONSE": headerRef("PAYMENT-RESPONSE"),
        "X-PAYMENT-RESPONSE": headerRef("X-PAYMENT-RESPONSE"),
        ...requestId,
      },
      // anyOf, not oneOf: a result does not name its capability, and two capabilities may well have
      // outputs of the same shape.
      content: jsonContent(
        caps.length > 0 ? { anyOf: caps.map((c) => ref(`${c.typeName}JobResult`)) } : { not: {} },
        resultExamples,
      ),
    },
  };
}

/** 400, 413 and 415: a request the service cannot read or run. */
function requestErrorResponses(model: AgentModel, requestId: Headers): Json {
  const unknown = unknownCapabilityName(model);
  return {
    "400": {
      description:
        "`validation`: the request or the input does not match its schema (the message names the field and the problem), or the body is not JSON, or (when a 402 must name this endpoint's URL and PUBLIC_URL is not set) the Host header is not a valid host name. `capability`: `task.capability` names no declared capability (the message lists the available ones).",
      headers: requestId,
      content: jsonContent(errorSchema(["validation", "capability"]), {
        validation: example(
          "Invalid request",
          errorBody("validation", "job_id: missing required field"),
        ),
        capability: example(
          "Unknown capability",
          errorBody("capability", unknownCapabilityMessage(model, unknown)),
        ),
      }),
    },
    "413": {
      description: "`validation`: the body is larger than the server's limit (MAX_BODY_BYTES).",
      headers: requestId,
      content: jsonContent(
        errorSchema(["validation"]),
        undefined,
        errorBody("validation", `request body is larger than ${DEFAULT_MAX_BODY_BYTES} bytes`),
      ),
    },
    "415": {
      description:
        "`validation`: the Content-Type is not application/json, or the body's encoding or charset is not supported.",
      headers: requestId,
      content: jsonContent(
        errorSchema(["validation"]),
        undefined,
        errorBody("validation", 'Content-Type must be application/json (got "text/plain")'),
      ),
    },
  };
}

/** 408: the deadline passed before or while the handler ran. */
function deadlineResponses(deadline: number, requestId: Headers): Json {
  return {
    "408": {
      description:
        "`deadline`: the deadline had passed on arrival, or the handler did not return before it. Nothing is charged; the payment authorization expires unused.",
      headers: requestId,
      content: jsonContent(errorSchema(["deadline"]), {
        "passed-on-arrival": example(
          "Deadline already passed",
          errorBody(
            "deadline",
            `deadline ${deadline} has already passed (now ${deadline + 40}); the handler was not run`,
          ),
        ),
        "handler-too-slow": example(
          "Handler did not finish in time",
          errorBody("deadline", `the handler did not finish before the deadline (${deadline})`),
        ),
      }),
    },
  };
}

/** 500 and 503: the service failed, or cannot take the job now. */
function serverErrorResponses(requestId: Headers): Json {
  return {
    "500": {
      description:
        "`internal`: the handler failed or its output does not match the output schema. The message is generic (the cause is in the server's log); nothing is charged.",
      headers: requestId,
      content: jsonContent(
        errorSchema(["internal"]),
        undefined,
        errorBody("internal", GENERIC_INTERNAL_MESSAGE),
      ),
    },
    "503": {
      description:
        "`internal`: the service cannot take the job now (it is shutting down, or its payment ledger is unreachable). Nothing was run or charged; send the same request again after `Retry-After` seconds.",
      headers: { "Retry-After": headerRef("Retry-After"), ...requestId },
      content: jsonContent(errorSchema(["internal"]), {
        "shutting-down": example(
          "Shutting down",
          errorBody(
            "internal",
            "the server is shutting down and takes no new jobs; nothing was run or charged; send it again",
          ),
        ),
        "ledger-unreachable": example(
          "Payment ledger unreachable",
          errorBody(
            "internal",
            "the payment ledger is unreachable, so no paid job can start; nothing was run or charged; retry in 5 s",
          ),
        ),
      }),
    },
  };
}
