// The console page (templates/runtime/console/): its browser script type-checks as JavaScript against the
// DOM's types; its copy of the payer guard answers exactly as the guard `call` and the clients use
// (src/caller/guard.ts, guard-evm.ts), on the same hostile offers and payments; GET / negotiates HTML for browsers only.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import * as guardCore from "../../src/caller/guard.js";
import { checkSignedPayment } from "../../src/caller/guard-evm.js";
import { GUARD_EXPORTS, GUARD_SCRIPT } from "../../templates/runtime/console/guard-script.js";
import {
  CONSOLE_CSP,
  CONSOLE_SCRIPT,
  renderConsolePage,
} from "../../templates/runtime/console/page.js";
import type { AgentDefinition, FieldDescriptor } from "../../templates/runtime/types.js";
import { consoleEnabled } from "../../templates/runtime/console/route.js";
import { PAGE_STYLE } from "../../templates/runtime/console/style.js";
import { FORM_SCRIPT } from "../../templates/runtime/console/form-script.js";
import { ANVIL_KEY, captureLogger, PAY_TO, withApp } from "./helpers.js";
import { createHash } from "node:crypto";

const guard = { ...guardCore, checkSignedPayment };
type Guard = Pick<typeof guard, (typeof GUARD_EXPORTS)[number]>;
const copy = new Function(`${GUARD_SCRIPT}\nreturn { ${GUARD_EXPORTS.join(", ")} };`)() as Guard;

/** What a call did: its value, or the reason and message it threw. */
function outcome(run: () => unknown): unknown {
  try {
    return { value: run() };
  } catch (error) {
    const e = error as { reason?: string; message: string };
    return { reason: e.reason, message: e.message };
  }
}

const PAYER = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const PAYEE = "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720";
const ASSET = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const entry = {
  scheme: "exact",
  network: "eip155:84532",
  asset: ASSET,
  payTo: PAYEE,
  maxTimeoutSeconds: 300,
};
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");

const AMOUNTS: unknown[] = [
  "10000",
  10000,
  "1e6",
  "0xf4240",
  "10000.0",
  " 10000",
  "-1",
  "",
  null,
  ["1"],
  "1".repeat(79),
  undefined,
  {},
];

const OFFERS: unknown[] = [
  ...AMOUNTS.map((amount) => ({ x402Version: 2, accepts: [{ ...entry, amount }] })),
  ...AMOUNTS.map((amount) => ({
    x402Version: 1,
    accepts: [{ ...entry, maxAmountRequired: amount }],
  })),
  { x402Version: 2, accepts: [{ ...entry, amount: "10000", maxAmountRequired: "1000000" }] },
  { x402Version: 2, accepts: [{ ...entry, amount: "10000", maxAmountRequired: "10000" }] },
  { x402Version: 1, accepts: [{ ...entry, amount: "1", maxAmountRequired: "1000000" }] },
  {
    x402Version: 2,
    accepts: [
      { ...entry, amount: "10000" },
      { ...entry, amount: 1000000 },
    ],
  },
  { x402Version: 2, accepts: [{ ...entry, amount: "10000", payTo: 5 }] },
  { x402Version: 2, accepts: [{ ...entry, amount: "10000", scheme: "" }] },
  { x402Version: 2, accepts: ["exact"] },
  { x402Version: 2, accepts: [] },
  {
    x402Version: 2,
    accepts: [],
    error: `not payable on solana:EtWT\u202e\u0007: ${"far ".repeat(100)}`,
  },
  { x402Version: 3, accepts: [{ ...entry, amount: "1" }] },
  { x402Version: "2", accepts: [{ ...entry, amount: "1" }] },
  [],
  null,
  "offer",
];

describe("the console's copy of the payer guard answers as src/caller/guard.ts does", () => {
  it.each(OFFERS.map((o) => [JSON.stringify(o) ?? String(o), o]))(
    "readOffers(%s)",
    (_name, offer) => {
      expect(outcome(() => copy.readOffers(offer))).toEqual(outcome(() => guard.readOffers(offer)));
    },
  );

  it.each(OFFERS.map((o) => [JSON.stringify(o) ?? String(o), o]))(
    "offersOf402 header and body (%s)",
    (_n, offer) => {
      const header = new Headers({ "payment-required": b64(offer) });
      expect(outcome(() => copy.offersOf402(header, ""))).toEqual(
        outcome(() => guard.offersOf402(header, "")),
      );
      const body = JSON.stringify(offer);
      expect(outcome(() => copy.offersOf402(new Headers(), body))).toEqual(
        outcome(() => guard.offersOf402(new Headers(), body)),
      );
    },
  );

  const offers = guard.readOffers({ x402Version: 2, accepts: [{ ...entry, amount: "10000" }] });
  const authorization = {
    from: PAYER,
    to: PAYEE,
    value: "10000",
    validAfter: "0",
    validBefore: String(Math.floor(Date.now() / 1000) + 600),
    nonce: `0x${"11".repeat(32)}`,
  };
  const payment = (change: (p: Record<string, unknown>) => unknown) =>
    b64(
      change({
        x402Version: 2,
        resource: { url: "http://127.0.0.1/execute" },
        accepted: { ...entry, amount: "10000" },
        payload: { signature: "0xsig", authorization: { ...authorization } },
      }),
    );
  const with_ = (auth: Record<string, unknown>) => (p: Record<string, unknown>) => ({
    ...p,
    payload: { signature: "0xsig", authorization: { ...authorization, ...auth } },
  });
  const PAYMENTS: Array<[string, string]> = [
    ["an honest payment", payment((p) => p)],
    ["a value above the cap", payment(with_({ value: "1000000" }))],
    ["a value as a number", payment(with_({ value: 10000 }))],
    ["a value in hex", payment(with_({ value: "0x2710" }))],
    ["another payer", payment(with_({ from: PAYEE }))],
    [
      "a window of years",
      payment(with_({ validBefore: String(Math.floor(Date.now() / 1000) + 1e8) })),
    ],
    ["a validBefore as a number", payment(with_({ validBefore: 1 }))],
    ["another payee", payment(with_({ to: PAYER }))],
    ["no payee", payment(with_({ to: undefined }))],
    [
      "an accepted amount that differs",
      payment((p) => ({ ...p, accepted: { ...entry, amount: "1" } })),
    ],
    [
      "an accepted amount as a number",
      payment((p) => ({ ...p, accepted: { ...entry, amount: 10000 } })),
    ],
    ["no accepted offer", payment((p) => ({ ...p, accepted: undefined }))],
    [
      "another network",
      payment((p) => ({ ...p, accepted: { ...entry, amount: "10000", network: "eip155:8453" } })),
    ],
    [
      "another asset",
      payment((p) => ({ ...p, accepted: { ...entry, amount: "10000", asset: PAYER } })),
    ],
    ["no authorization", payment((p) => ({ ...p, payload: { transaction: "AAAA" } }))],
    [
      "x402 v1",
      payment((p) => ({
        x402Version: 1,
        scheme: "exact",
        network: "base-sepolia",
        payload: p.payload,
      })),
    ],
    ["x402 v7", payment((p) => ({ ...p, x402Version: 7 }))],
    ["not JSON", Buffer.from("not json").toString("base64")],
    ["not base64", "%%%"],
  ];
  it.each(PAYMENTS)("checkSignedPayment: %s", (_name, header) => {
    for (const maxAtomic of [10_000n, 9_999n, 1_000_000n]) {
      const limit = { maxAtomic, payer: PAYER, validForAtMost: 3900 };
      expect(outcome(() => copy.checkSignedPayment(header, offers, limit))).toEqual(
        outcome(() => guard.checkSignedPayment(header, offers, limit)),
      );
    }
  });

  it.each([0, 1, 299.5, 86_400])(
    "signingWindow(%s): the same window as create-agent's payers",
    (deadline) => {
      expect(copy.signingWindow(deadline)).toBe(guard.signingWindow(deadline));
    },
  );

  it("refuses the hostile forms at all (the comparison above is not between two things that accept everything)", () => {
    expect(() =>
      copy.readOffers({ x402Version: 2, accepts: [{ ...entry, amount: 1000000 }] }),
    ).toThrow("is the number 1000000");
    expect(() =>
      copy.checkSignedPayment(payment(with_({ value: "1000000" })), offers, {
        maxAtomic: 10_000n,
        payer: PAYER,
        validForAtMost: 3900,
      }),
    ).toThrow("more than the 10000 allowed");
    expect(() =>
      copy.checkSignedPayment(
        payment(with_({ validBefore: String(Math.floor(Date.now() / 1000) + 1e8) })),
        offers,
        { maxAtomic: 10_000n, payer: PAYER, validForAtMost: 3900 },
      ),
    ).toThrow("longer than the job's deadline plus an hour (3900 s)");
  });
});

describe("the console's browser script", () => {
  it("type-checks as ES2020 JavaScript against the DOM's types", async () => {
    const dir = await mkdtemp(join(tmpdir(), "console-script-"));
    try {
      const file = join(dir, "console.js");
      await writeFile(file, CONSOLE_SCRIPT);
      const program = ts.createProgram([file], {
        allowJs: true,
        checkJs: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2020,
        lib: ["lib.es2020.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
        types: [],
        strict: false,
      });
      const problems = ts.getPreEmitDiagnostics(program).map((d) => {
        const where =
          d.file && d.start !== undefined
            ? d.file.getLineAndCharacterOfPosition(d.start)
            : undefined;
        const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
        return where ? `console.js:${where.line + 1}:${where.character + 1} ${text}` : text;
      });
      expect(problems).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000); // a whole type-check with the DOM's types: a hang guard on 2 busy cores

  it("is what the Content-Security-Policy allows, and the only script it allows", () => {
    const hash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
    expect(CONSOLE_CSP).toContain(`script-src ${hash(CONSOLE_SCRIPT)};`);
    expect(CONSOLE_CSP).toContain(`style-src ${hash(PAGE_STYLE)};`);
    expect(CONSOLE_CSP).not.toMatch(/unsafe|\*/);
    expect(CONSOLE_SCRIPT).not.toMatch(/<\/script/i);
  });

  it("CONSOLE is on by default, off with 'off', and anything else is named as a configuration error", () => {
    expect(consoleEnabled({})).toBe(true);
    expect(consoleEnabled({ CONSOLE: "on" })).toBe(true);
    expect(consoleEnabled({ CONSOLE: "off" })).toBe(false);
    expect(() => consoleEnabled({ CONSOLE: "no" })).toThrow('CONSOLE is "no": set it to "off"');
  });
});

describe("the console page's HTML", () => {
  const field = (schema: Record<string, unknown>) => schema as unknown as FieldDescriptor;
  const agent = {
    name: "odd</title><script>alert(1)</script>",
    version: "1.0.0",
    description: "<img src=x onerror=alert(1)>",
    capabilities: {
      shape: {
        name: "shape",
        priceAtomic: "10000",
        declaration: {
          description: "</script><script>alert(2)</script>",
          pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
          input_schema: {
            mode: field({ type: "string", enum: ["a", "b"], default: "b", required: true }),
            tags: field({ type: "array", items: { type: "string", enum: ["x", "y"] } }),
            words: field({ type: "array", items: { type: "string" }, default: ["one", "two"] }),
            count: field({ type: "integer", minimum: 2, default: 3, description: "How many" }),
            loud: field({ type: "boolean", default: true }),
            extra: field({ type: "object" }),
            spec: field({ type: "object", properties: { id: { type: "string", required: true } } }),
          },
          output_schema: { ok: field({ type: "boolean" }) },
        },
      },
    },
  } as unknown as AgentDefinition;
  const html = renderConsolePage(agent, { devMode: false, serviceVersion: "1.0" });

  it("escapes everything the manifest says: no markup of its own reaches the page", () => {
    expect(html).not.toContain("<script>alert");
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    // The data block cannot be closed from inside: every "<" in it is \u003c.
    const block = /<script type="application\/json" id="console-data">([\s\S]*?)<\/script>/.exec(
      html,
    )?.[1];
    expect(block).toBeDefined();
    expect(block).not.toContain("<");
    expect(JSON.parse(block!).capabilities.shape.input_schema.mode.enum).toEqual(["a", "b"]);
    expect([...html.matchAll(/<script>/g)]).toHaveLength(1); // the page's own script, nothing else
  });

  it("builds each control from its schema: select, checkboxes, lines, number, checkbox, JSON, fieldset", () => {
    expect(html).toMatch(
      /<select id="f-shape-mode"[^>]*required[^>]*><option>a<\/option><option selected>b<\/option><\/select>/,
    );
    expect(html).toMatch(/<fieldset class="field" id="f-shape-tags"[^>]*data-kind="choices"/);
    expect(html).toMatch(
      /<textarea id="f-shape-words"[^>]*data-kind="lines"[^>]*>one\ntwo<\/textarea>/,
    );
    expect(html).toMatch(/<input type="number" id="f-shape-count"[^>]*step="1" min="2" value="3">/);
    expect(html).toContain(
      '<p class="help" id="f-shape-count-help">How many — a whole number, at least 2</p>',
    );
    expect(html).toMatch(/<input type="checkbox" id="f-shape-loud"[^>]* checked>/);
    expect(html).toMatch(/<textarea id="f-shape-extra"[^>]*data-kind="json"/);
    expect(html).toMatch(
      /<fieldset class="field group" id="f-shape-spec"[\s\S]*id="f-shape-spec-id"[^>]*aria-required="true"/,
    );
    expect(html).toContain("Pay 0.01 USDC and run");
  });
});

describe("the console page says where it is paid, how else to pay, and every endpoint", () => {
  /** GET / as a browser asks for it, and the data block the page's script reads. */
  async function pageOf(env: Record<string, string>) {
    return withApp({ devMode: false, env, logger: captureLogger() }, async ({ url }) => {
      const html = await (await fetch(`${url}/`, { headers: { accept: "text/html" } })).text();
      const block = /id="console-data">([\s\S]*?)<\/script>/.exec(html)?.[1];
      return { html, data: JSON.parse(block!) as Record<string, unknown> };
    });
  }

  it("names the network and payee; a local chain (dev:paid's RPC) is said so; the footer lists MCP and the discovery documents", async () => {
    const { html, data } = await pageOf({
      PAY_TO,
      X402_NETWORK: "base-sepolia",
      X402_RPC_URL: "http://127.0.0.1:8545",
      X402_SETTLER_KEY: ANVIL_KEY,
    });
    expect(html).toContain(`base-sepolia (eip155:84532), paid to <code>${PAY_TO}</code>`);
    expect(/<div class="networks">[\s\S]*?<\/div>/.exec(html)![0]).toContain(
      "a local chain on the agent's machine",
    );
    expect(data.localNetworks).toEqual(["eip155:84532"]);
    // What the page pays, whatever a 402 asks: the configured network, its USDC and payee.
    expect(data.networks).toEqual([
      {
        caip2: "eip155:84532",
        label: "base-sepolia (eip155:84532)",
        payTo: PAY_TO,
        chainId: 84532,
        asset: {
          address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
          name: "USDC",
          version: "2",
        },
      },
    ]);
    expect(data.deadlineSeconds).toBe(120);
    const footer = /<footer>([\s\S]*?)<\/footer>/.exec(html)![1]!;
    for (const path of [
      "/about",
      "/health",
      "/.well-known/agent-card.json",
      "/openapi.json",
      "/llms.txt",
    ])
      expect(footer).toContain(`<a href="${path}">${path}</a>`);
    expect(footer).toContain("POST <code>/execute</code>");
    expect(footer).toContain("POST <code>/mcp</code>");
    // A visitor has no project: no `npm run call`, but any x402 client, told how by /llms.txt.
    expect(html).not.toContain("npm run call");
    expect(html).toContain('<a href="/llms.txt">/llms.txt</a>');
  });

  it("MCP=off drops /mcp from the footer; a public RPC is no local chain", async () => {
    const { html, data } = await pageOf({
      PAY_TO,
      X402_NETWORK: "base-sepolia",
      X402_RPC_URL: "https://sepolia.base.org",
      X402_SETTLER_KEY: ANVIL_KEY,
      MCP: "off",
    });
    expect(html).not.toContain("/mcp");
    expect(/<div class="networks">[\s\S]*?<\/div>/.exec(html)![0]).not.toContain("local chain");
    expect(data.localNetworks).toEqual([]);
  });

  it("a facilitator on this machine (dev:paid's without the onchain feature) is a local chain; a public one is not", async () => {
    const local = await pageOf({
      PAY_TO,
      X402_NETWORK: "base-sepolia",
      X402_FACILITATOR_URL: "http://127.0.0.1:4021",
    });
    expect(/<div class="networks">[\s\S]*?<\/div>/.exec(local.html)![0]).toContain(
      "a local chain on the agent's machine",
    );
    expect(local.data.localNetworks).toEqual(["eip155:84532"]);
    for (const onThisMachine of [
      "http://[::1]:4021",
      "http://facilitator.localhost:4021,http://127.0.0.2:4021",
    ])
      expect(
        (
          await pageOf({
            PAY_TO,
            X402_NETWORK: "base-sepolia",
            X402_FACILITATOR_URL: onThisMachine,
          })
        ).data.localNetworks,
        onThisMachine,
      ).toEqual(["eip155:84532"]);
    const remote = await pageOf({
      PAY_TO,
      X402_NETWORK: "base-sepolia",
      X402_FACILITATOR_URL: "http://127.0.0.1:4021,https://x402.org/facilitator",
    });
    expect(remote.data.localNetworks).toEqual([]);
  });

  it("a Solana-only agent's page asks for a deadline Solana can be paid for (30 s), not 120 s", async () => {
    const { html, data } = await pageOf({
      X402_NETWORK: "solana-devnet",
      PAY_TO_SOLANA: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
      X402_FACILITATOR_URL: "https://facilitator.example.com",
    });
    expect(data.deadlineSeconds).toBe(30);
    expect(html).toContain("solana-devnet (solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1), paid to");
  });
});

describe("the console's check of a JSON field", () => {
  // The form script's own functions (page-script.ts supplies isRecord), run as the browser runs them.
  const form = new Function(
    `function isRecord(v) { return typeof v === "object" && v !== null && !Array.isArray(v); }\n${FORM_SCRIPT}\nreturn { check, serverProblems };`,
  )() as {
    check: (
      schema: unknown,
      value: unknown,
      path: string[],
      problems: unknown[],
      required: boolean,
    ) => void;
    serverProblems: (message: string) => Array<{ path: string[]; message: string }>;
  };
  const items = {
    type: "array",
    minItems: 1,
    items: {
      type: "object",
      properties: {
        sku: { type: "string", pattern: "^[A-Z0-9-]+$", required: true },
        qty: { type: "integer", minimum: 1 },
      },
    },
  };

  it("names the item of each problem and refuses an unknown field, as the server does", () => {
    const problems: unknown[] = [];
    form.check(items, [{ sku: "ab" }, { sku: "A", qty: 0, x: 1 }], ["items"], problems, true);
    expect(problems).toEqual([
      { path: ["items", "[0]", "sku"], message: 'must match pattern "^[A-Z0-9-]+$"' },
      { path: ["items", "[1]", "qty"], message: "must be >= 1" },
      { path: ["items", "[1]"], message: 'unknown field "x"' },
    ]);
    // The server's words for the same input read back to the same places.
    expect(
      form.serverProblems(
        'input.items[0].sku: must match pattern "^[A-Z0-9-]+$"; input.items[1]: unknown field "x"',
      ),
    ).toEqual([
      { path: ["items", "[0]", "sku"], message: 'must match pattern "^[A-Z0-9-]+$"' },
      { path: ["items", "[1]"], message: 'unknown field "x"' },
    ]);
  });

  it("a server message naming a path with an escape JSON does not know is shown as the server's, not thrown", () => {
    expect(form.serverProblems('input["\\q"]: bad; input.text: must be short')).toEqual([
      { path: [], message: 'input["\\q"]: bad' },
      { path: ["text"], message: "must be short" },
    ]);
    expect(form.serverProblems('input: missing required field "\\q"')).toEqual([
      { path: [], message: 'input: missing required field "\\q"' },
    ]);
  });
});
