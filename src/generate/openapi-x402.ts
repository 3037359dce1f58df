/**
 * The x402 side of the OpenAPI document (openapi.ts): the payment headers as security schemes, the 402
 * body and the PAYMENT-REQUIRED header's schemas (x402 v1 and v2), the settlement receipt, and the
 * response headers every operation refers to; and POST /execute's payment answers (402, 409).
 */
import type { CapabilityModel } from "../manifest/model.js";
import {
  capabilityDescription,
  DEFAULT_MAX_TIMEOUT_SECONDS,
  errorBody,
  errorSchema,
  example,
  EXAMPLE,
  headerRef,
  type Json,
  jsonContent,
  PAYMENT_REQUIRED_MESSAGE,
  PAYMENT_SCHEMES,
  priceText,
  ref,
} from "./openapi-parts.js";

/** The payment, declared as what it is to HTTP: a credential in a header (OpenAPI `apiKey`). */
export function securitySchemes(): Json {
  return {
    [PAYMENT_SCHEMES.v2]: {
      type: "apiKey",
      in: "header",
      name: "PAYMENT-SIGNATURE",
      description:
        "x402 version 2 payment: base64 of the JSON PaymentPayload (`x402Version: 2`, `accepted`: the entry of the `PAYMENT-REQUIRED` header's `accepts` you pay for, `payload`: the EIP-3009 authorization and its signature). Required unless the server runs in dev mode; without it (and without X-PAYMENT) the answer is 402 saying how to pay.",
    },
    [PAYMENT_SCHEMES.v1]: {
      type: "apiKey",
      in: "header",
      name: "X-PAYMENT",
      description:
        "x402 version 1 payment: base64 of the JSON payment payload (`x402Version: 1`, `scheme`, `network`, `payload`: the EIP-3009 authorization and its signature), for clients that read the 402 body's `accepts`. Used when PAYMENT-SIGNATURE is absent.",
    },
  };
}

// The x402 objects are left open (no additionalProperties: false): the protocol grows, and catalogue
// extensions ride along in them.
const ADDRESS: Json = { type: "string", pattern: "^0x[0-9a-fA-F]{40}$" };
const ATOMIC_AMOUNT: Json = {
  type: "string",
  pattern: "^[0-9]+$",
  description:
    'The price in USDC atomic units (6 decimals): "10000" is 0.01 USDC. The exact scheme charges exactly this.',
};
const ASSET_DOMAIN: Json = {
  type: "object",
  description: "The USDC contract's EIP-712 domain name and version, needed to sign the payment.",
  required: ["name", "version"],
  properties: { name: { type: "string" }, version: { type: "string" } },
};
const MAX_TIMEOUT: Json = {
  type: "integer",
  minimum: 1,
  description:
    "How long the payment authorization must stay valid, in seconds from signing (covers the job's deadline).",
};

/** The x402 schemas of components, in the document's order: v1, v2, the settlement receipt. */
export function x402Schemas(): Json {
  return {
    ...v1Schemas(),
    ...v2Schemas(),
    SettlementResponse: {
      type: "object",
      description:
        "The receipt of a settled payment, sent base64-encoded (UTF-8 JSON) in PAYMENT-RESPONSE (x402 v2) or X-PAYMENT-RESPONSE (v1).",
      required: ["success", "transaction", "network", "payer"],
      properties: {
        success: { const: true },
        transaction: {
          type: "string",
          pattern: "^0x[0-9a-fA-F]{64}$",
          description: "Hash of the transferWithAuthorization transaction.",
        },
        network: { type: "string", description: "The network, as the client named it." },
        payer: { ...ADDRESS, description: "Who paid." },
      },
    },
  };
}

/** x402 v1: the 402 body and one way to pay. */
function v1Schemas(): Json {
  return {
    PaymentRequired: {
      type: "object",
      description:
        "The 402 body when no payment header was sent (spec 2.6): x402 version 1 payment requirements. x402 v2 clients read the same offer from the PAYMENT-REQUIRED header.",
      required: ["x402Version", "error", "accepts"],
      properties: {
        x402Version: { const: 1 },
        error: { type: "string" },
        accepts: { type: "array", minItems: 1, items: ref("PaymentRequirementsV1") },
      },
    },
    PaymentRequirementsV1: {
      type: "object",
      description: "One way to pay (x402 v1): a v1 client signs an EIP-3009 authorization for it.",
      required: [
        "scheme",
        "network",
        "maxAmountRequired",
        "resource",
        "description",
        "mimeType",
        "payTo",
        "maxTimeoutSeconds",
        "asset",
        "extra",
      ],
      properties: {
        scheme: { const: "exact" },
        network: { type: "string", description: 'x402 v1 network name, e.g. "base-sepolia".' },
        maxAmountRequired: ATOMIC_AMOUNT,
        resource: { type: "string", format: "uri", description: "URL of POST /execute." },
        description: { type: "string", description: "What the job does." },
        mimeType: { const: "application/json" },
        payTo: { ...ADDRESS, description: "Address the payment goes to." },
        maxTimeoutSeconds: MAX_TIMEOUT,
        asset: { ...ADDRESS, description: "The USDC token contract." },
        extra: ASSET_DOMAIN,
        outputSchema: {
          type: "object",
          description:
            "For x402 catalogues (Bazaar, v1): how to call this endpoint (`input`: an example job request) and the job's output.",
        },
      },
    },
  };
}

/** x402 v2: the PAYMENT-REQUIRED header's content and one way to pay. */
function v2Schemas(): Json {
  return {
    PaymentRequiredV2: {
      type: "object",
      description:
        "x402 version 2 PaymentRequired, sent base64-encoded (UTF-8 JSON) in the PAYMENT-REQUIRED header. A v2 client copies one `accepts` entry into its payment's `accepted`.",
      required: ["x402Version", "error", "resource", "accepts"],
      properties: {
        x402Version: { const: 2 },
        error: { type: "string" },
        resource: {
          type: "object",
          required: ["url", "description", "mimeType"],
          properties: {
            url: { type: "string", format: "uri" },
            description: { type: "string" },
            mimeType: { const: "application/json" },
          },
        },
        accepts: { type: "array", minItems: 1, items: ref("PaymentRequirementsV2") },
        extensions: {
          type: "object",
          description:
            "For x402 catalogues: `bazaar` holds an example job request and result (`info`) and their JSON Schema (`schema`).",
        },
      },
    },
    PaymentRequirementsV2: {
      type: "object",
      description: "One way to pay (x402 v2).",
      required: ["scheme", "network", "amount", "asset", "payTo", "maxTimeoutSeconds", "extra"],
      properties: {
        scheme: { const: "exact" },
        network: { type: "string", description: 'CAIP-2 network id, e.g. "eip155:84532".' },
        amount: ATOMIC_AMOUNT,
        asset: { ...ADDRESS, description: "The USDC token contract." },
        payTo: { ...ADDRESS, description: "Address the payment goes to." },
        maxTimeoutSeconds: MAX_TIMEOUT,
        extra: ASSET_DOMAIN,
      },
    },
  };
}

function base64Json(schemaName: string): Json {
  return {
    type: "string",
    contentEncoding: "base64",
    contentMediaType: "application/json",
    contentSchema: ref(schemaName),
  };
}

export function componentHeaders(): Json {
  return {
    "PAYMENT-REQUIRED": {
      description:
        "x402 version 2: base64 of the JSON PaymentRequired (PaymentRequiredV2): this job's price and how to pay it.",
      schema: base64Json("PaymentRequiredV2"),
    },
    "PAYMENT-RESPONSE": {
      description:
        "x402 version 2 clients: base64 of the JSON settlement receipt (SettlementResponse). Absent in dev mode.",
      schema: base64Json("SettlementResponse"),
    },
    "X-PAYMENT-RESPONSE": {
      description:
        "x402 version 1 clients: base64 of the JSON settlement receipt (SettlementResponse). Absent in dev mode.",
      schema: base64Json("SettlementResponse"),
    },
    ETag: {
      description: "Strong entity tag of the document (send it back in If-None-Match).",
      schema: { type: "string" },
    },
    "Retry-After": {
      description: "Seconds to wait before sending the request again.",
      schema: { type: "integer", minimum: 0 },
    },
    "X-Request-Id": {
      description:
        "The request's id: the caller's X-Request-Id when it is 1-128 characters of [A-Za-z0-9._:@/+=-], else a new UUID.",
      schema: { type: "string" },
    },
  };
}

const PAYER_BUSY =
  "payer 0x857b06519E91e3A54538791bDbb0E22373e36b66 already has 8 paid jobs running here (MAX_JOBS_PER_PAYER), so this one was not run; nothing was charged, and the same payment may be sent again once one of them has finished";

/** 402 (no payment, or a payment that cannot pay), 409 (a payment id used for something else), 429 (a payer at its cap). */
export function paymentResponses(caps: CapabilityModel[], requestId: Record<string, Json>): Json {
  return {
    "402": {
      description:
        'Payment required. No payment header: the payment-required body (spec 2.6, x402 v1) and the `PAYMENT-REQUIRED` header (x402 v2), both offering this capability\'s price. A payment header that is invalid, expired, or cannot be settled: an error body with `error_type: "payment"`, with `PAYMENT-REQUIRED` when paying again can help. Nothing was charged unless the message says the settlement is unconfirmed.',
      headers: { "PAYMENT-REQUIRED": headerRef("PAYMENT-REQUIRED"), ...requestId },
      content: jsonContent(
        { oneOf: [ref("PaymentRequired"), errorSchema(["payment"])] },
        paymentExamples(caps),
      ),
    },
    "409": {
      description:
        "`payment`: the payment carries an x402 `payment-identifier` id already used with another payment, or for another request (capability, input or job_id). Nothing was run or charged. (The identical request with the same payment and id gets the stored answer instead: 200.)",
      headers: requestId,
      content: jsonContent(
        errorSchema(["payment"]),
        undefined,
        errorBody(
          "payment",
          'payment id "pay_7d5d747be160e280504c099d984bcfe0" was already used with another payment (payment-identifier binds an id to one exact PaymentPayload); nothing was run or charged: give a new payment its own id',
        ),
      ),
    },
    "429": {
      description:
        "`payment` (code `payer_busy`): the payer already has MAX_JOBS_PER_PAYER paid jobs running on this agent. Nothing was run or charged; the same payment may be sent again after `Retry-After` seconds.",
      headers: { "Retry-After": headerRef("Retry-After"), ...requestId },
      content: jsonContent(errorSchema(["payment"]), undefined, errorBody("payment", PAYER_BUSY)),
    },
  };
}

/** The 402 examples: one offer per capability, and an unusable payment. */
function paymentExamples(caps: CapabilityModel[]): Json {
  const examples: Json = {};
  for (const c of caps) {
    examples[`missing-payment-${c.name}`] = example(
      `No payment header, ${c.name} (${priceText(c)})`,
      {
        x402Version: 1,
        error: PAYMENT_REQUIRED_MESSAGE,
        accepts: [
          {
            scheme: "exact",
            network: EXAMPLE.networkV1,
            maxAmountRequired: c.priceAtomic,
            resource: EXAMPLE.resource,
            description: capabilityDescription(c),
            mimeType: "application/json",
            payTo: EXAMPLE.payTo,
            maxTimeoutSeconds: DEFAULT_MAX_TIMEOUT_SECONDS,
            asset: EXAMPLE.asset,
            extra: EXAMPLE.assetDomain,
          },
        ],
      },
      "network, asset, payTo, resource and maxTimeoutSeconds depend on the server's configuration and the job's deadline.",
    );
  }
  examples["invalid-payment"] = example(
    "The payment header is present but unusable",
    errorBody(
      "payment",
      `authorization expired (validBefore ${EXAMPLE.now - 100}, now ${EXAMPLE.now}); sign a new one`,
    ),
  );
  return examples;
}
