/**
 * The payer's guard as the console page runs it in the browser: the rules of create-agent's payer guard
 * (src/caller/guard.ts in create-agent, which `call` and generated clients use), as plain ES2020 text the
 * page embeds. A copy, because the browser runs JavaScript and a project has no build step for the page; a
 * test in create-agent runs both on the same hostile offers and signed payments and requires the same
 * answers and messages, so the copy cannot drift unnoticed.
 *
 * - an offer's amount is read by its x402 version as the scheme signs it (v2 `amount`, v1
 *   `maxAmountRequired`), decimal strings only, a second amount field must agree, one bad entry refuses all;
 * - the payment header about to be sent is decoded and checked: an EIP-3009 authorization from the payer,
 *   for one checked offer, of at most the cap, valid for at most the job's deadline plus an hour.
 *
 * Kept free of backticks and template substitutions: it lives in a String.raw literal.
 */
export const GUARD_SCRIPT = String.raw`
var ATOMIC_AMOUNT = /^\d{1,78}$/;

function PaymentGuardError(reason, message) {
  var error = /** @type {Error & { reason?: string }} */ (new Error(message));
  error.name = "PaymentGuardError";
  error.reason = reason;
  return error;
}

function shown(value) {
  if (typeof value === "string")
    return JSON.stringify(value.length > 40 ? value.slice(0, 40) + "\u2026" : value);
  if (value === undefined) return "missing";
  if (typeof value === "number" || typeof value === "bigint") return "the number " + String(value);
  return "a" + (Array.isArray(value) ? "n array" : value === null ? " null" : " " + typeof value);
}

/* A service's words fit to be quoted on one line (theySay; the page's offer check too): control and direction characters made spaces, at most max characters. */
function plainText(text, max) {
  text = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, " ");
  return text.length > max ? text.slice(0, max) + "\u2026" : text;
}

function theySay(error) {
  if (typeof error !== "string" || error.trim() === "") return "";
  return " (the service says: " + plainText(error, 300) + ")";
}

/* A JSON object: not null, not an array (the page script uses it too). */
function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function offerAmount(x402Version, entry) {
  var signed = x402Version === 1 ? "maxAmountRequired" : "amount";
  var other = x402Version === 1 ? "amount" : "maxAmountRequired";
  var value = entry[signed];
  if (typeof value !== "string" || !ATOMIC_AMOUNT.test(value))
    throw PaymentGuardError(
      "offer",
      '"' + signed + '" (the amount an x402 v' + x402Version + " payer signs) is " + shown(value) +
        ", not a decimal string of atomic units",
    );
  if (other in entry) {
    var second = entry[other];
    if (typeof second !== "string" || !ATOMIC_AMOUNT.test(second) || BigInt(second) !== BigInt(value))
      throw PaymentGuardError(
        "offer",
        '"' + other + '" is ' + shown(second) + ' while "' + signed + '" is ' + JSON.stringify(value) +
          ": the offer states two amounts",
      );
  }
  return BigInt(value);
}

function readOffers(paymentRequired) {
  var refuse = function (problem) {
    return PaymentGuardError("offer", "the service's payment offer " + problem);
  };
  if (!isRecord(paymentRequired)) throw refuse("is not a JSON object");
  var version = paymentRequired.x402Version;
  if (version !== 1 && version !== 2)
    throw refuse("has x402Version " + shown(version) + "; this payer speaks x402 versions 1 and 2");
  var accepts = paymentRequired.accepts;
  if (!Array.isArray(accepts) || accepts.length === 0)
    throw refuse('has no "accepts" entries' + theySay(paymentRequired.error));
  return accepts.map(function (entry, index) {
    var where = "accepts[" + index + "]";
    if (!isRecord(entry)) throw refuse(where + " is not an object");
    var amount;
    try {
      amount = offerAmount(version, entry);
    } catch (error) {
      throw refuse(where + ": " + error.message);
    }
    var text = function (key) {
      var value = entry[key];
      if (typeof value !== "string" || value === "")
        throw refuse(where + ': "' + key + '" is ' + shown(value) + ", not a string");
      return value;
    };
    return {
      x402Version: version,
      scheme: text("scheme"),
      network: text("network"),
      amount: amount,
      asset: text("asset"),
      payTo: text("payTo"),
    };
  });
}

function decodeBase64Json(value, what, reason) {
  try {
    var binary = atob(value.trim().replace(/-/g, "+").replace(/_/g, "/"));
    var bytes = Uint8Array.from(binary, function (c) { return c.charCodeAt(0); });
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    throw PaymentGuardError(reason, what + " is not base64 JSON");
  }
}

function offersOf402(headers, body) {
  var header = headers.get("payment-required");
  if (header) return readOffers(decodeBase64Json(header, "the PAYMENT-REQUIRED header", "offer"));
  var parsed;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    return undefined;
  }
  return isRecord(parsed) && parsed.x402Version === 1 ? readOffers(parsed) : undefined;
}

function checkSignedPayment(header, offers, limit) {
  var refuse = function (problem) {
    return PaymentGuardError("signed", "the payment about to be sent " + problem + "; it was not sent");
  };
  var decoded = decodeBase64Json(header, "the payment header about to be sent", "signed");
  if (!isRecord(decoded)) throw refuse("is not a JSON object");
  var version = decoded.x402Version;
  if (version !== 1 && version !== 2) throw refuse("has x402Version " + shown(version));
  var scheme, network, asset, acceptedAmount;
  if (version === 2) {
    var accepted = decoded.accepted;
    if (!isRecord(accepted)) throw refuse('names no "accepted" offer');
    scheme = accepted.scheme;
    network = accepted.network;
    if (typeof accepted.asset === "string") asset = accepted.asset;
    try {
      acceptedAmount = offerAmount(2, accepted);
    } catch (error) {
      throw refuse("accepts an offer whose " + error.message);
    }
  } else {
    scheme = decoded.scheme;
    network = decoded.network;
  }
  var inner = decoded.payload;
  var authorization = isRecord(inner) ? inner.authorization : undefined;
  if (!isRecord(inner) || !isRecord(authorization) || typeof inner.signature !== "string")
    throw refuse(
      "is not an EIP-3009 transfer authorization, the only kind this payer signs (the exact scheme in USDC on an EVM network)",
    );
  var value = authorization.value, from = authorization.from, to = authorization.to;
  if (typeof value !== "string" || !ATOMIC_AMOUNT.test(value))
    throw refuse("signs a value of " + shown(value) + ", not a decimal string of atomic units");
  var amount = BigInt(value);
  if (typeof from !== "string" || typeof to !== "string")
    throw refuse("has no payer or payee address in its authorization");
  if (amount > limit.maxAtomic)
    throw refuse("signs " + amount + " atomic units, more than the " + limit.maxAtomic + " allowed");
  if (acceptedAmount !== undefined && acceptedAmount !== amount)
    throw refuse("signs " + amount + " atomic units for an offer of " + acceptedAmount);
  var validBefore = authorization.validBefore;
  if (typeof validBefore !== "string" || !/^\d{1,15}$/.test(validBefore))
    throw refuse("is valid before " + shown(validBefore) + ", not a decimal string of Unix seconds");
  var seconds = Number(validBefore) - Math.floor(Date.now() / 1000);
  if (seconds > limit.validForAtMost)
    throw refuse("stays valid for " + seconds + " s, longer than the job's deadline plus an hour (" + limit.validForAtMost +
      " s): the service offers a payment window (maxTimeoutSeconds) it could settle long after the job");
  if (from.toLowerCase() !== limit.payer.toLowerCase())
    throw refuse("is signed for the account " + from + ", not the payer " + limit.payer);
  var offer = offers.find(function (o) {
    return (
      o.x402Version === version &&
      o.scheme === scheme &&
      o.network === network &&
      o.amount === amount &&
      o.payTo.toLowerCase() === to.toLowerCase() &&
      (asset === undefined || o.asset.toLowerCase() === asset.toLowerCase())
    );
  });
  if (!offer)
    throw refuse(
      "(" + amount + " atomic units to " + to + " on " + String(network) + ") matches none of the offers that were checked",
    );
  return {
    x402Version: version,
    network: offer.network,
    amount: amount,
    payer: from,
    payTo: offer.payTo,
    asset: offer.asset,
  };
}

// How long past the job's deadline a payment may stay valid, for a job due in deadlineSeconds (its deadline plus
// an hour): checkSignedPayment's validForAtMost.
function signingWindow(deadlineSeconds) {
  return Math.ceil(deadlineSeconds) + 3600;
}
`;

/** The names GUARD_SCRIPT defines that the page script (and the parity test) use. */
export const GUARD_EXPORTS = [
  "offerAmount",
  "readOffers",
  "offersOf402",
  "checkSignedPayment",
  "signingWindow",
] as const;
