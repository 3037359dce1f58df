/**
 * The console page's browser code for its forms, as plain ES2020 text (part of PAGE_SCRIPT, see
 * page-script.ts, which splices it in; it uses that file's helpers in the same scope):
 * - reads a form's controls into a job's input and checks it with the rules of its schema, reading the
 *   server's validation messages back into problems at paths;
 * - shows a job's answer (status, time, what was paid, the settlement transaction, the output or the
 *   error), and each problem beside the field it names.
 *
 * Kept free of backticks and template substitutions: it lives in a String.raw literal.
 */
export const FORM_SCRIPT = String.raw`/* ---- reading and checking a form ---- */

function readControl(element, kind, schema) {
  if (kind === "boolean") return element.checked;
  if (kind === "choices") {
    var chosen = [];
    element.querySelectorAll("input[type=checkbox]").forEach(function (box) { if (box.checked) chosen.push(box.value); });
    return chosen.length ? chosen : undefined;
  }
  var raw = element.value;
  if (raw.trim() === "") return undefined;
  if (kind === "number" || kind === "integer") return raw.trim() === "" ? undefined : Number(raw);
  if (kind === "json") {
    try { return JSON.parse(raw); } catch (error) { return { __invalidJson: String(error.message || error) }; }
  }
  if (kind === "lines") {
    var itemType = isRecord(schema.items) ? schema.items.type : "string";
    return raw.split("\n").map(function (s) { return s.trim(); }).filter(Boolean).map(function (s) {
      return itemType === "string" ? s : Number(s);
    });
  }
  return raw;
}

function schemaAt(fields, path) {
  var schema = fields[path[0]];
  for (var i = 1; i < path.length && schema; i++)
    schema = isRecord(schema.properties) ? schema.properties[path[i]] : undefined;
  return schema || {};
}

function collect(form, capability) {
  var fields = data.capabilities[capability].input_schema;
  var input = {};
  form.querySelectorAll("[data-path]").forEach(function (element) {
    var kind = element.getAttribute("data-kind");
    if (kind === "group") return;
    var path = JSON.parse(element.getAttribute("data-path"));
    var value = readControl(element, kind, schemaAt(fields, path));
    if (value === undefined) return;
    var target = input;
    for (var i = 0; i < path.length - 1; i++) {
      if (!isRecord(target[path[i]])) target[path[i]] = {};
      target = target[path[i]];
    }
    target[path[path.length - 1]] = value;
  });
  return input;
}

function describeType(schema) { return schema.type === "integer" ? "integer" : schema.type; }

/* The rules the server's validator applies (Ajv messages), for one value. */
function check(schema, value, path, problems, required) {
  if (value === undefined) {
    if (required) problems.push({ path: path, message: "missing required field" });
    return;
  }
  if (isRecord(value) && "__invalidJson" in value) {
    problems.push({ path: path, message: "is not valid JSON (" + value.__invalidJson + ")" });
    return;
  }
  var type = schema.type;
  var ok =
    type === "string" ? typeof value === "string" :
    type === "number" ? typeof value === "number" && isFinite(value) :
    type === "integer" ? typeof value === "number" && Number.isInteger(value) :
    type === "boolean" ? typeof value === "boolean" :
    type === "array" ? Array.isArray(value) :
    type === "object" ? isRecord(value) : true;
  if (!ok) { problems.push({ path: path, message: "must be " + describeType(schema) }); return; }
  if (Array.isArray(schema.enum) && !schema.enum.some(function (v) { return JSON.stringify(v) === JSON.stringify(value); }))
    problems.push({ path: path, message: "must be one of " + schema.enum.map(function (v) { return JSON.stringify(v); }).join(", ") });
  if (typeof value === "string") {
    var length = Array.from(value).length;
    if (typeof schema.minLength === "number" && length < schema.minLength)
      problems.push({ path: path, message: "must NOT have fewer than " + schema.minLength + " characters" });
    if (typeof schema.maxLength === "number" && length > schema.maxLength)
      problems.push({ path: path, message: "must NOT have more than " + schema.maxLength + " characters" });
    if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value))
      problems.push({ path: path, message: 'must match pattern "' + schema.pattern + '"' });
  }
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) problems.push({ path: path, message: "must be >= " + schema.minimum });
    if (typeof schema.maximum === "number" && value > schema.maximum) problems.push({ path: path, message: "must be <= " + schema.maximum });
    if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) problems.push({ path: path, message: "must be > " + schema.exclusiveMinimum });
    if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) problems.push({ path: path, message: "must be < " + schema.exclusiveMaximum });
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) problems.push({ path: path, message: "must NOT have fewer than " + schema.minItems + " items" });
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) problems.push({ path: path, message: "must NOT have more than " + schema.maxItems + " items" });
    if (isRecord(schema.items)) value.forEach(function (item, i) { check(schema.items, item, path.concat(["[" + i + "]"]), problems, false); });
  }
  if (isRecord(value) && isRecord(schema.properties)) {
    var requiredList = Array.isArray(schema.required) ? schema.required : [];
    Object.keys(schema.properties).forEach(function (key) {
      var sub = schema.properties[key];
      check(sub, value[key], path.concat([key]), problems, sub.required === true || requiredList.indexOf(key) >= 0);
    });
    /* A declared object is closed, as the server's schema is. */
    Object.keys(value).forEach(function (key) {
      if (!Object.prototype.hasOwnProperty.call(schema.properties, key)) problems.push({ path: path, message: "unknown field " + JSON.stringify(key) });
    });
  }
}

function checkInput(capability, input) {
  var fields = data.capabilities[capability].input_schema;
  var problems = [];
  Object.keys(fields).forEach(function (name) {
    check(fields[name], input[name], [name], problems, fields[name].required === true);
  });
  return problems;
}

/* "input.product.sku: must match ...; input: missing required field \"text\"" -> field paths and messages. */
/* A quoted name's JSON escapes read; undefined when they are not JSON's (the server's words are then shown as they are). */
function unquote(text) {
  try { return JSON.parse('"' + text + '"'); } catch (error) { return undefined; }
}

function serverProblems(message) {
  return String(message).split("; ").map(function (part) {
    var whole = { path: [], message: part };
    var match = /^(?:input)?((?:\.[A-Za-z_$][\w$]*|\[\d+\]|\["(?:[^"\\]|\\.)*"\]|^[A-Za-z_$][\w$]*)*): (.*)$/.exec(part);
    if (!match) return whole;
    var path = [];
    var re = /\.?([A-Za-z_$][\w$]*)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]/g, step;
    while ((step = re.exec(match[1]))) {
      if (step[1] !== undefined) path.push(step[1]);
      else if (step[2] !== undefined) path.push("[" + step[2] + "]");
      else if (step[3] !== undefined) path.push(unquote(step[3]));
    }
    var missing = /^missing required field "((?:[^"\\]|\\.)*)"$/.exec(match[2]);
    if (missing) path.push(unquote(missing[1]));
    if (path.indexOf(undefined) >= 0) return whole;
    return missing ? { path: path, message: "missing required field" } : { path: path, message: match[2] };
  });
}

/* ---- showing results and errors ---- */

function clearErrors(form) {
  form.querySelectorAll(".error").forEach(function (p) { p.textContent = ""; p.hidden = true; });
  form.querySelectorAll("[aria-invalid]").forEach(function (e) { e.removeAttribute("aria-invalid"); });
}

function showProblems(form, capability, problems) {
  var first = /** @type {HTMLElement | null} */ (null);
  var general = [];
  problems.forEach(function (problem) {
    var path = problem.path.slice();
    var slot = null, inside = [];
    while (path.length > 0 && !(slot = document.getElementById(fieldId(capability, path) + "-error"))) inside.unshift(path.pop());
    if (!slot) { general.push(problem.message); return; }
    /* Within a JSON field, where: "[1].sku: must match ...". */
    var where = inside.map(function (p, i) { return p.charAt(0) === "[" || i === 0 ? p : "." + p; }).join("");
    var message = where ? where + ": " + problem.message : problem.message;
    slot.textContent = (slot.textContent ? slot.textContent + "; " : "") + message;
    slot.hidden = false;
    var control = document.getElementById(fieldId(capability, path));
    if (control) {
      control.setAttribute("aria-invalid", "true");
      if (!first) first = /** @type {HTMLElement} */ (control.matches("fieldset") ? control.querySelector("input, select, textarea") : control);
    }
  });
  var formError = form.querySelector(".form-error");
  if (general.length) { formError.textContent = general.join("; "); formError.hidden = false; }
  if (first) first.focus();
}

function resultArea(capability) { return document.getElementById("result-" + capability); }

function show(capability, parts) {
  var area = resultArea(capability);
  area.hidden = false;
  area.replaceChildren();
  parts.forEach(function (part) { if (part) area.appendChild(part); });
}

function element(tag, text, className) {
  var e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (className) e.className = className;
  return e;
}

function line(label, value) {
  var p = element("p");
  p.appendChild(element("strong", label + ": "));
  if (typeof value === "string") p.appendChild(document.createTextNode(value)); else p.appendChild(value);
  return p;
}

function decodeHeader(value) {
  try {
    var bytes = Uint8Array.from(atob(value), function (c) { return c.charCodeAt(0); });
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) { return undefined; }
}

function encodeHeader(value) {
  var bytes = new TextEncoder().encode(JSON.stringify(value));
  var binary = "";
  bytes.forEach(function (b) { binary += String.fromCharCode(b); });
  return btoa(binary);
}

async function showAnswer(capability, form, response, started, paid) {
  var seconds = ((performance.now() - started) / 1000).toFixed(2) + " s";
  var text = await response.text();
  var body;
  try { body = JSON.parse(text); } catch (error) { body = undefined; }
  var status = line("Status", response.status + (isRecord(body) && body.status ? " " + body.status : ""));
  status.setAttribute("data-status", String(response.status));
  var parts = [status, line("Time", seconds)];
  if (response.ok && isRecord(body)) {
    if (paid) {
      // The token and network were checked before signing (offer-script.ts): the configured network's USDC.
      var where = data.networks.find(function (n) { return n.caip2 === paid.network; });
      parts.push(line("Paid", usdc(paid.amount) + " USDC" + (where ? " on " + where.label : "")));
      var receipt = decodeHeader(response.headers.get("payment-response") || "");
      if (isRecord(receipt) && typeof receipt.transaction === "string") {
        // A local chain (dev:paid's): no public explorer has seen the transaction, so no link to one.
        var local = data.localNetworks.indexOf(paid.network) >= 0 || data.localNetworks.indexOf(receipt.network) >= 0;
        var explorer = local ? undefined : EXPLORERS[receipt.network];
        var tx;
        if (explorer && /^0x[0-9a-fA-F]{64}$/.test(receipt.transaction)) {
          tx = element("a", receipt.transaction, "tx");
          tx.href = explorer + receipt.transaction;
          tx.rel = "noreferrer";
        } else tx = element("code", receipt.transaction, "tx");
        parts.push(line("Settlement transaction", tx));
        if (local) parts.push(line("Chain", "a local chain on the agent's machine (such as dev:paid's): no public explorer knows this transaction"));
      }
    }
    parts.push(element("h4", "Output"));
    parts.push(element("pre", JSON.stringify(body.output, null, 2), "output"));
  } else {
    var message = isRecord(body) && typeof body.error === "string" ? body.error : text.slice(0, 2000);
    parts.push(line("Error" + (isRecord(body) && body.error_type ? " (" + body.error_type + ")" : ""), message));
    if (isRecord(body) && body.error_type === "validation") showProblems(form, capability, serverProblems(message));
  }
  show(capability, parts);
}

`;
