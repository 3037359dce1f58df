/**
 * The console page's paid requests in flight, as plain ES2020 text (part of PAGE_SCRIPT, see
 * page-script.ts, which splices it in; it uses that file's helpers in the same scope):
 * - one request per form at a time: while one runs, Pay and "Fetch the answer again" are disabled and
 *   the form is busy (aria-busy), and what goes wrong is shown, never left as an unhandled rejection;
 * - a signed payment and its exact job body are kept in sessionStorage from before the paid request is
 *   sent until its answer is shown (or the job's deadline has passed): a tab reloaded meanwhile offers to
 *   fetch the answer again, sending the identical request with the same signed payment (the server keeps
 *   the answer for an identical retry and never charges twice); nothing is ever signed again;
 * - while a form's paid request waits for its answer, its Pay starts no new payment (that would replace the
 *   kept one, and whoever paid could lose the answer): the page says so and offers to fetch that answer
 *   again, or to forget it, only by a button saying the payment may still be charged;
 * - leaving the page while a paid request is in flight asks first (beforeunload).
 *
 * Kept free of backticks and template substitutions: it lives in a String.raw literal.
 */
export const RESUME_SCRIPT = String.raw`/* ---- paid requests in flight: one at a time, kept across a reload ---- */

var PENDING = "create-agent-console-paid:";

/* The same records in memory: with storage off or full, a payment still waiting is not forgotten in this tab. */
var held = Object.create(null);

/* Keeps a signed payment and its job until its answer is shown (sessionStorage: this tab only). */
function keepPending(capability, body, payment, signed) {
  held[capability] = {
    body: body, payment: payment, amount: signed.amount.toString(), network: signed.network,
    deadline: JSON.parse(body).deadline,
  };
  try {
    sessionStorage.setItem(PENDING + capability, JSON.stringify(held[capability]));
  } catch (error) { /* storage off or full: the page still pays, only not across a reload */ }
}

function dropPending(capability) {
  delete held[capability];
  try { sessionStorage.removeItem(PENDING + capability); } catch (error) { /* storage off: nothing kept */ }
}

/* The kept payment of a capability whose answer was never shown, while its job's deadline has not passed. */
function pendingOf(capability) {
  var kept = held[capability];
  try { kept = kept || JSON.parse(sessionStorage.getItem(PENDING + capability) || "null"); } catch (error) { kept = undefined; }
  if (kept === null) return undefined;
  var usable = isRecord(kept) && typeof kept.body === "string" && typeof kept.payment === "string" &&
    typeof kept.amount === "string" && /^\d{1,78}$/.test(kept.amount) && typeof kept.deadline === "number" &&
    kept.deadline > Date.now() / 1000;
  if (!usable) dropPending(capability);
  return usable ? kept : undefined;
}

var inFlight = 0;
function askBeforeLeaving(event) {
  event.preventDefault();
  event.returnValue = "";
}

/* Sends a signed job until its answer is shown: kept meanwhile, and leaving the page asks first. */
async function sendPaid(capability, form, body, payment, signed, started) {
  keepPending(capability, body, payment, signed);
  if (inFlight++ === 0) window.addEventListener("beforeunload", askBeforeLeaving);
  try {
    return await send(capability, form, body, payment, signed, started);
  } finally {
    if (--inFlight === 0) window.removeEventListener("beforeunload", askBeforeLeaving);
  }
}

/** A form's buttons: Pay, and its result's ("Fetch the answer again", "Forget it"). @returns {HTMLButtonElement[]} */
function buttonsOf(form, capability) {
  return [form.querySelector("button[type=submit]")].concat(Array.from(resultArea(capability).querySelectorAll("button")));
}

/* Runs one request of a form at a time (none while another runs): its buttons disabled, the form busy, errors shown. */
async function whileBusy(form, capability, work) {
  if (form.hasAttribute("aria-busy")) return;
  form.setAttribute("aria-busy", "true");
  buttonsOf(form, capability).forEach(function (b) { b.disabled = true; });
  try {
    await work();
  } catch (error) {
    refuse(capability, String(error && error.message ? error.message : error));
  } finally {
    buttonsOf(form, capability).forEach(function (b) { b.disabled = false; });
    form.removeAttribute("aria-busy");
  }
}

/* "Fetch the answer again": the same job with the same signed payment, never signed again. */
function againButton(form, capability, body, payment, signed) {
  var again = /** @type {HTMLButtonElement} */ (element("button", "Fetch the answer again", "again"));
  again.type = "button";
  again.addEventListener("click", function () {
    whileBusy(form, capability, function () { return sendPaid(capability, form, body, payment, signed, performance.now()); });
  });
  return again;
}

/* "Forget it": the kept payment dropped on this explicit request only; its answer can then not be fetched from here. */
function forgetButton(form, capability) {
  var forget = /** @type {HTMLButtonElement} */ (element("button", "Forget it (the payment may still be charged if the job ran)", "forget"));
  forget.type = "button";
  forget.addEventListener("click", function () {
    dropPending(capability);
    show(capability, [line("Forgotten", "this page no longer keeps the earlier paid job for \"" + capability + "\": its answer cannot be fetched " +
      "from here, and if the service ran it, its payment may have been charged. Pay now starts a new job.")]);
    form.querySelector("button[type=submit]").focus();
  });
  return forget;
}

/* A paid request whose answer was never shown, offered to be fetched again (or forgotten); returns its fetch button. */
function offerPending(form, capability, kept, label, why) {
  var signed = { amount: BigInt(kept.amount), network: kept.network };
  var again = againButton(form, capability, kept.body, kept.payment, signed);
  show(capability, [line(label, why + " Its signed payment of " + usdc(signed.amount) + " USDC may have settled: fetching the answer sends the same job " +
    "with the same signed payment again, which is never charged twice; nothing is signed again."), again, forgetButton(form, capability)]);
  return again;
}

/* After a reload: a paid request whose answer was never shown is offered to be fetched again. */
function offerResume(form, capability) {
  var kept = pendingOf(capability);
  if (kept) offerPending(form, capability, kept, "Answer not shown", "the page was left while a paid request for \"" + capability + "\" was on its way.");
}

/* Pay while the form's earlier paid job waits for its answer: no new payment, which would replace the kept one. */
function stillPending(form, capability) {
  var kept = pendingOf(capability);
  if (kept) offerPending(form, capability, kept, "Still waiting", "an earlier paid job for \"" + capability +
    "\" has not been answered yet, so Pay started no new payment and nothing was signed. Fetch its answer first.").focus();
  return Boolean(kept);
}

`;
