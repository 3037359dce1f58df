/**
 * The console page's check of what it is asked to pay, as plain ES2020 text (part of PAGE_SCRIPT, see
 * page-script.ts, which splices it in; it uses that file's helpers and the guard's signingWindow,
 * plainText and isRecord in the same scope). The page pays only what the service declares, whatever its 402 says:
 * - an offer is paid only on a network the page's data block declares (the service's configured
 *   networks), in that network's token as configured (address, EIP-712 name and version), to that
 *   network's configured payee, for exactly the capability's price; any other offer is refused before
 *   the wallet is asked anything, as `create-agent call` refuses another token (src/caller/guard-asset.ts);
 * - the typed data about to be signed is checked once more against the same configuration, and its
 *   validity window (validAfter, validBefore) is whole Unix seconds, already started, not yet over, and
 *   ends no later than the job's deadline plus an hour (the guard's signingWindow, the same rule its
 *   checkSignedPayment applies to the header): a 402 asking for a longer or fractional window
 *   (maxTimeoutSeconds) is refused before the wallet is asked to sign.
 *
 * Kept free of backticks and template substitutions: it lives in a String.raw literal.
 */
export const OFFER_SCRIPT = String.raw`/* ---- what the page pays: the service's declared networks, token, payee and price ---- */

/* A value from the service, fit to be quoted (the guard's plainText): at most 66 characters. */
function quoted(value) { return plainText(String(value), 66); }

function sameAddress(a, b) { return typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase(); }

/* The configured EVM network with this CAIP-2 id (its chain id, token and payee), if the page declares it. */
function declaredNetwork(caip2) {
  return data.networks.find(function (n) {
    return n.caip2 === caip2 && typeof n.chainId === "number" && isRecord(n.asset) &&
      typeof n.asset.name === "string" && typeof n.asset.version === "string";
  });
}

function declaredNames() {
  var names = data.networks.filter(function (n) { return declaredNetwork(n.caip2); }).map(function (n) { return n.label; });
  return names.length ? names.join(", ") : "no EVM network";
}

/* Why an EVM offer is not what the service declares, in a sentence; "" when it is. */
function offerProblem(offer, entry, capability) {
  var net = declaredNetwork(offer.network);
  var price = BigInt(data.capabilities[capability].priceAtomic);
  var extra = isRecord(entry.extra) ? entry.extra : {};
  var usdcOf = net ? net.label + "'s USDC as this service is configured" : "";
  return (
    !net ? "the service asks to be paid on " + quoted(offer.network) + ", a network this page does not declare (it is paid on " + declaredNames() + ")" :
    !sameAddress(offer.asset, net.asset.address) ? "the service asks to be paid in the token " + quoted(offer.asset) + ", not " + usdcOf + " (" + net.asset.address + ")" :
    extra.name !== net.asset.name || extra.version !== net.asset.version ? "the service's offer names its token " + quoted(JSON.stringify(extra.name)) +
      " version " + quoted(JSON.stringify(extra.version)) + ", not " + usdcOf + " (" + JSON.stringify(net.asset.name) + " version " + JSON.stringify(net.asset.version) + ")" :
    !sameAddress(offer.payTo, net.payTo) ? "the service asks to be paid to " + quoted(offer.payTo) + ", not " + net.payTo + ", the payee this page shows for " + net.label :
    offer.amount > price ? "the service asks " + usdc(offer.amount) + " USDC for \"" + capability + "\", more than the " + usdc(price) +
      " USDC this page shows (a service asking more than it declares is refused)" :
    offer.amount !== price ? "the service asks " + usdc(offer.amount) + " USDC for \"" + capability + "\", not the " + usdc(price) + " USDC this page shows" : ""
  );
}

/* The first offer the page may pay ({ offer, entry, net }); throws saying why none is, before anything is asked of the wallet. */
function chooseOffer(offers, paymentRequired, capability) {
  var accepts = isRecord(paymentRequired) && Array.isArray(paymentRequired.accepts) ? paymentRequired.accepts : [];
  var problems = [];
  for (var i = 0; i < offers.length; i++) {
    var offer = offers[i], entry = accepts[i];
    if (offer.x402Version !== 2 || offer.scheme !== "exact" || !/^eip155:\d+$/.test(offer.network) || !isRecord(entry)) continue;
    var problem = offerProblem(offer, entry, capability);
    if (!problem) return { offer: offer, entry: entry, net: declaredNetwork(offer.network) };
    problems.push(problem);
  }
  if (problems.length === 0)
    throw new Error("the service offers no x402 v2 exact payment on an EVM network, the kind this page pays (it offers " +
      offers.map(function (o) { return quoted(o.network); }).join(", ") + "); nothing was signed. Any x402 client that pays those networks can: see /llms.txt");
  var others = problems.length > 1 ? " (its " + (problems.length - 1) + " other EVM offers are not what it declares either)" : "";
  throw new Error(problems[0] + others + "; nothing was signed");
}

function typedDataFor(offer, entry, payer, chainId) {
  var now = Math.floor(Date.now() / 1000);
  var timeout = typeof entry.maxTimeoutSeconds === "number" ? entry.maxTimeoutSeconds : 300;
  return {
    types: {
      EIP712Domain: [
        { name: "name", type: "string" },
        { name: "version", type: "string" },
        { name: "chainId", type: "uint256" },
        { name: "verifyingContract", type: "address" },
      ],
      TransferWithAuthorization: TRANSFER_WITH_AUTHORIZATION,
    },
    primaryType: "TransferWithAuthorization",
    domain: { name: entry.extra.name, version: entry.extra.version, chainId: chainId, verifyingContract: offer.asset },
    message: {
      from: payer,
      to: offer.payTo,
      value: offer.amount.toString(),
      validAfter: String(now - 600),
      validBefore: String(now + timeout),
      nonce: "0x" + randomHex(32),
    },
  };
}

/* Why an authorization's validity window is not one to sign; "" when it is. */
function windowProblem(m) {
  var now = Math.floor(Date.now() / 1000), whole = /^\d{1,15}$/;
  if (typeof m.validAfter !== "string" || !whole.test(m.validAfter)) return "starts at " + quoted(m.validAfter) + ", not whole Unix seconds";
  if (typeof m.validBefore !== "string" || !whole.test(m.validBefore))
    return "ends at " + quoted(m.validBefore) + ", not whole Unix seconds (the service's maxTimeoutSeconds is not a whole number)";
  var seconds = Number(m.validBefore) - now, limit = signingWindow(data.deadlineSeconds);
  return (
    seconds > limit ? "stays valid for " + seconds + " s, longer than the job's deadline plus an hour (" + limit +
      " s): the service offers a payment window (maxTimeoutSeconds) it could settle long after the job" :
    seconds <= 0 ? "is over before it is signed (the service's maxTimeoutSeconds is not positive)" :
    Number(m.validAfter) > now ? "starts only in " + (Number(m.validAfter) - now) + " s" : ""
  );
}

/* The last look before the wallet is asked to sign: the checked offer, on the configured network, token and payee, at the price. */
function checkTypedData(typed, offer, net, price, payer) {
  var m = typed.message, d = typed.domain;
  var problem =
    typed.primaryType !== "TransferWithAuthorization" ? "is not a TransferWithAuthorization" :
    typeof m.value !== "string" || !/^\d{1,78}$/.test(m.value) ? "has no decimal value" :
    BigInt(m.value) !== offer.amount ? "signs " + m.value + " atomic units for an offer of " + offer.amount :
    BigInt(m.value) !== price ? "signs " + m.value + " atomic units, not the price of " + price :
    !sameAddress(m.to, offer.payTo) || !sameAddress(m.to, net.payTo) ? "pays " + quoted(m.to) + ", not the payee this page shows" :
    !sameAddress(m.from, payer) ? "is from " + quoted(m.from) + ", not the connected account" :
    !sameAddress(d.verifyingContract, offer.asset) || !sameAddress(d.verifyingContract, net.asset.address) ||
      d.name !== net.asset.name || d.version !== net.asset.version ? "is for another token" :
    d.chainId !== net.chainId ? "is for another chain" : windowProblem(m);
  if (problem) throw new Error("the authorization about to be signed " + problem + "; nothing was signed");
}

`;
