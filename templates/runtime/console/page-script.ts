/**
 * What the console page runs in the browser, as plain ES2020 text (no build step: the server sends it as
 * it is, with a hash in the Content-Security-Policy). create-agent type-checks it as JavaScript against
 * the DOM's types (checkJs) in its own tests. It:
 * - checks a form with the rules of its schema (read from the page's data block) and collects the input;
 * - dev mode: posts the job, shows the output, status and time;
 * - production: pays the 402's offer with a browser wallet (EIP-1193), signing the EIP-3009
 *   TransferWithAuthorization with eth_signTypedData_v4, after the guard (guard-script.ts) read the offer
 *   strictly and only when it is what the service declares: one of its networks, that network's USDC and
 *   payee as configured, the price the page shows (offer-script.ts, from the page's data block); the typed
 *   data, its validity window included, is checked once more right before the wallet is asked to sign, and
 *   the payment header right before it is sent; when the 402 declares the x402 payment-identifier extension
 *   the payment carries a fresh id ("pay_" and 32 hex digits); an answer lost after paying (no response, or
 *   the id's first request still running, or the tab reloaded meanwhile) is fetched again with the SAME
 *   signed payment and id, a few times, saying so, then on request; never signed again (resume-script.ts:
 *   one request per form at a time, the payment kept in sessionStorage until its answer is shown, and no
 *   new payment while it is kept);
 * - shows a server's validation error beside the field it names.
 * Reading and checking a form, and showing a job's answer and errors, are in form-script.ts; choosing and
 * checking what is signed in offer-script.ts; requests in flight in resume-script.ts (each spliced in
 * between this file's helpers and the rest, in one scope, which the guard's helpers open: isRecord among
 * them, see page.ts); EIP-3009's typed-data type comes first, from payments/x402.ts, so the page signs
 * exactly what the server verifies.
 *
 * Kept free of backticks and template substitutions: it lives in a String.raw literal.
 */
import { TRANSFER_WITH_AUTHORIZATION } from "../payments/x402.js";
import { FORM_SCRIPT } from "./form-script.js";
import { OFFER_SCRIPT } from "./offer-script.js";
import { RESUME_SCRIPT } from "./resume-script.js";

export const PAGE_SCRIPT =
  // EIP-3009's typed-data type, the very one the server verifies signatures against.
  "var TRANSFER_WITH_AUTHORIZATION = " +
  JSON.stringify(TRANSFER_WITH_AUTHORIZATION.TransferWithAuthorization) +
  ";\n" +
  String.raw`
var data = JSON.parse(document.getElementById("console-data").textContent);
var EXPLORERS = { "eip155:8453": "https://basescan.org/tx/", "eip155:84532": "https://sepolia.basescan.org/tx/" };
var NAMED_NETWORKS = { "eip155:8453": "Base", "eip155:84532": "Base Sepolia" };

function fieldId(capability, path) {
  var part = function (s) {
    return s.replace(/[^A-Za-z0-9_-]/g, function (c) { return "_" + c.charCodeAt(0).toString(16); });
  };
  return "f-" + part(capability) + "-" + path.map(part).join("-");
}

function usdc(atomic) {
  var text = BigInt(atomic).toString().padStart(7, "0");
  var whole = text.slice(0, -6), fraction = text.slice(-6).replace(/0+$/, "");
  return fraction ? whole + "." + fraction : whole;
}

function randomHex(bytes) {
  var random = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(random, function (b) { return b.toString(16).padStart(2, "0"); }).join("");
}

` +
  FORM_SCRIPT +
  OFFER_SCRIPT +
  RESUME_SCRIPT +
  String.raw`function jobBody(capability, input) {
  return JSON.stringify({
    service_version: data.serviceVersion,
    job_id: "console-" + randomHex(8),
    task: { capability: capability, input: input },
    // One every offered network can be paid for (a Solana-only agent: its limit; see console/facts.ts).
    deadline: Math.floor(Date.now() / 1000) + data.deadlineSeconds,
  });
}

function post(body, payment) {
  var headers = { "Content-Type": "application/json" };
  if (payment) headers["PAYMENT-SIGNATURE"] = payment;
  return fetch("/execute", { method: "POST", headers: headers, body: body, credentials: "omit", redirect: "error" });
}

function refuse(capability, message) {
  var p = line("Refused", message);
  p.className = "refused";
  show(capability, [p]);
}

/* ---- paying with a browser wallet ---- */

function hex(n) { return "0x" + n.toString(16); }

/* The 402's payment-identifier extension with a fresh id in it (as create-agent call sends it), if declared. */
function paymentIdentifier(paymentRequired) {
  var declared = isRecord(paymentRequired.extensions) ? paymentRequired.extensions["payment-identifier"] : undefined;
  if (!isRecord(declared) || !isRecord(declared.info)) return undefined;
  var info = Object.assign({}, declared.info, { id: "pay_" + randomHex(16) });
  return { "payment-identifier": Object.assign({}, declared, { info: info }) };
}

function walletError(error) {
  var code = error && typeof error.code === "number" ? " (wallet error " + error.code + ")" : "";
  return (error && error.message ? error.message : String(error)) + code;
}

/* The wallet on the network's chain, its account asked for, then its signature of the checked typed data. */
async function sign(ethereum, chosen, price) {
  var offer = chosen.offer, net = chosen.net, chainId = net.chainId;
  var name = NAMED_NETWORKS[offer.network] || net.label;
  var accounts = await ethereum.request({ method: "eth_requestAccounts" });
  var payer = accounts[0];
  if (typeof payer !== "string") throw new Error("the wallet shared no account");
  if (Number(await ethereum.request({ method: "eth_chainId" })) !== chainId) {
    try {
      await ethereum.request({ method: "wallet_switchEthereumChain", params: [{ chainId: hex(chainId) }] });
    } catch (error) {
      if (error && error.code === 4902)
        throw new Error("the wallet does not know " + name + " (chain id " + chainId + "): add that network to the wallet, then try again; nothing was signed");
      throw error;
    }
  }
  if (Number(await ethereum.request({ method: "eth_chainId" })) !== chainId)
    throw new Error("the wallet is not on " + name + " (chain id " + chainId + ")");
  var typed = typedDataFor(offer, chosen.entry, payer, chainId);
  checkTypedData(typed, offer, net, price, payer);
  var signature = await ethereum.request({ method: "eth_signTypedData_v4", params: [payer, JSON.stringify(typed)] });
  return { payer: payer, typed: typed, signature: signature };
}

async function pay(capability, form, body, started) {
  var price = BigInt(data.capabilities[capability].priceAtomic);
  var first = await post(body);
  if (first.status !== 402) return showAnswer(capability, form, first, started);
  var text = await first.text();
  if (text.length > 256 * 1024) return refuse(capability, "the service's 402 answer is larger than 256 KiB; nothing was signed");
  var offers, paymentRequired, chosen;
  try {
    offers = offersOf402(first.headers, text);
    var header = first.headers.get("payment-required");
    paymentRequired = header ? decodeHeader(header) : JSON.parse(text);
    // Only what the service declares: its network, that network's USDC and payee, the price.
    if (offers) chosen = chooseOffer(offers, paymentRequired, capability);
  } catch (error) {
    return refuse(capability, error.message + (/nothing was signed/.test(error.message) ? "" : "; nothing was signed"));
  }
  if (!offers) return showAnswer(capability, form, new Response(text, { status: 402 }), started);
  var signing;
  try {
    signing = await sign(wallet(), chosen, price);
  } catch (error) {
    return refuse(capability, walletError(error));
  }
  var extensions = paymentIdentifier(paymentRequired);
  var payment = encodeHeader(Object.assign({
    x402Version: 2,
    resource: paymentRequired.resource,
    accepted: chosen.entry,
    payload: { signature: signing.signature, authorization: signing.typed.message },
  }, extensions && { extensions: extensions }));
  var signed;
  try {
    signed = checkSignedPayment(payment, offers, { maxAtomic: price, payer: signing.payer, validForAtMost: signingWindow(data.deadlineSeconds) });
  } catch (error) {
    return refuse(capability, error.message);
  }
  return sendPaid(capability, form, body, payment, signed, started);
}

/* Seconds before each automatic resend of a paid request whose answer was lost. */
var RESENDS = [1, 2, 4];

/* Sends the paid job; a lost answer is fetched again with the same signed payment (and id), never re-signed. */
async function send(capability, form, body, payment, signed, started, resent) {
  resent = resent || 0;
  var response, lost;
  try {
    response = await post(body, payment);
  } catch (error) {
    lost = "no answer arrived (" + String(error.message || error) + ")";
  }
  // 402 with Retry-After: this payment's first request still runs, or its settlement is not confirmed
  // yet; the same request gets its answer then.
  var wait = response && response.status === 402 ? Number(response.headers.get("retry-after")) : 0;
  // 402 saying its settlement is not confirmed yet: the server holds the answer for this same request.
  var unsettled = response && response.status === 402 && await unconfirmed(response);
  if (response && !unsettled && !(wait > 0 && resent < RESENDS.length)) {
    await showAnswer(capability, form, response, started, signed);
    return dropPending(capability); // shown: nothing left to fetch again
  }
  var what = "the signed payment of " + usdc(signed.amount) + " USDC was sent but " +
    (lost || (unsettled ? "its settlement is not confirmed yet (the service holds the answer until it is)" : "its first request is still running"));
  if (resent < RESENDS.length) {
    var seconds = Math.min(wait || RESENDS[resent], 10);
    show(capability, [line("Retrying", what + ". Sending the same job with the same signed payment again in " + seconds +
      " s (retry " + (resent + 1) + " of " + RESENDS.length + "); it is never charged twice.")]);
    await new Promise(function (resolve) { setTimeout(resolve, seconds * 1000); });
    return send(capability, form, body, payment, signed, started, resent + 1);
  }
  var again = againButton(form, capability, body, payment, signed);
  show(capability, [line(unsettled ? "Not confirmed yet" : "Answer lost", what + ". It may have settled: fetching again sends the same job with the same signed payment, which is never charged twice."), again]);
  again.focus();
}

/* Whether a 402 says the payment's settlement is not confirmed yet (the answer is held for the same request). */
async function unconfirmed(response) {
  try {
    return /settlement is (still )?unconfirmed/i.test(String((await response.clone().json()).error));
  } catch (error) {
    return false;
  }
}

/* ---- wiring ---- */

/** The browser wallet (EIP-1193), if there is one. @returns {any} */
function wallet() { return /** @type {any} */ (window).ethereum; }

function noWallet(capability) {
  var note = document.getElementById("nowallet-" + capability);
  note.hidden = false;
  note.focus();
}

document.querySelectorAll("form.capability").forEach(function (form) {
  var capability = form.getAttribute("data-capability");
  /** @type {NodeListOf<HTMLElement>} */ (form.querySelectorAll(".needs-js")).forEach(function (e) { e.hidden = false; });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (form.hasAttribute("aria-busy")) return; // one request at a time
    clearErrors(form);
    /** @type {HTMLElement} */ (form.querySelector(".form-error")).hidden = true;
    if (!data.devMode && stillPending(form, capability)) return; // a paid job still waiting is never replaced
    var input = collect(form, capability);
    var problems = checkInput(capability, input);
    if (problems.length) return showProblems(form, capability, problems);
    if (!data.devMode && !wallet()) return noWallet(capability);
    var started = performance.now();
    var body = jobBody(capability, input);
    whileBusy(form, capability, async function () {
      if (data.devMode) await showAnswer(capability, form, await post(body), started);
      else await pay(capability, form, body, started);
    });
  });
  if (!data.devMode) offerResume(form, capability);
});
`;
