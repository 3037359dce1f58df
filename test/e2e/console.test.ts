// The console page at GET / in a real browser (Debian's chromium, driven by puppeteer-core) against a generated
// project: dev mode lists and runs every capability; production pays with a browser wallet, a test EIP-1193
// provider that forwards to the anvil node (which signs eth_signTypedData_v4 for its unlocked accounts), on
// Circle's USDC; a hostile 402 is refused before anything is signed. axe-core checks accessibility. No request
// may leave the agent's origin. Screenshots of each state are kept under .tmp/console/ (printed).
import { readFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import puppeteer, { type Browser, type HTTPRequest, type Page } from "puppeteer-core";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { PAYER_KEYS, PAYEE, SETTLER_KEY } from "../chain/accounts.js";
import { usdcBalance } from "../chain/usdc.js";
import { chain, productionEnv } from "./chain.js";
import { buildProject, copyProject, startServer } from "./helpers.js";

// Code run in the page (page.evaluate, $eval) sees the DOM; the repo's type-check has no DOM lib.
type El = {
  innerText: string;
  hidden: boolean;
  value: string;
  textContent: string | null;
  id: string;
};
declare const document: any; // eslint-disable-line @typescript-eslint/no-explicit-any
declare const window: any; // eslint-disable-line @typescript-eslint/no-explicit-any

const shared = inject("projectDir");
const balance = (address: `0x${string}`) => usdcBalance(chain.rpcUrl, chain.asset, address);
const manifest = JSON.parse(
  readFileSync(join(import.meta.dirname, "../../fixtures/e2e/agent.json"), "utf8"),
) as {
  name: string;
  version: string;
  description: string;
  capabilities: Record<
    string,
    { pricing: { amount: string }; input_schema: Record<string, unknown> }
  >;
};
const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);
const ARTIFACTS = join(import.meta.dirname, "../../.tmp/console");
const DOCS_SCREENSHOT = join(import.meta.dirname, "../../docs/console.png");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

// A handler that refuses one value the schema allows, as a handler's own validation error naming its field.
const HANDLER = `import type { SummarizeInput, SummarizeOutput } from "../generated/types.js";
import type { HandlerContext } from "../runtime/types.js";
import { ValidationError } from "../runtime/errors.js";

export default async function summarize(input: SummarizeInput, _ctx: HandlerContext): Promise<SummarizeOutput> {
  if (input.text === "forbidden") throw new ValidationError('input.text: "forbidden" is a word this agent does not summarize');
  return { summary: input.text.toUpperCase() };
}
`;

let projectDir = "";
let browser: Browser;
let killTimer: NodeJS.Timeout | undefined;
beforeAll(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  console.log(`console screenshots: ${ARTIFACTS}`);
  projectDir = await copyProject(shared, "create-agent-console-");
  await writeFile(join(projectDir, "src/capabilities/summarize.ts"), HANDLER);
  await buildProject(projectDir);
  // One browser for the whole file; --no-sandbox because the tests run as root. Its life is bounded:
  // killed after 10 minutes whatever happens to the test run.
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-dev-shm-usage",
      "--no-first-run",
      "--disable-background-networking",
    ],
  });
  const child = browser.process();
  killTimer = setTimeout(() => child?.kill("SIGKILL"), 10 * 60_000);
  killTimer.unref();
});
afterAll(async () => {
  clearTimeout(killTimer);
  await browser?.close();
  if (projectDir) await rm(dirname(projectDir), { recursive: true, force: true });
});

/** A fresh page that records every request it makes (to check none leaves `origin`). */
async function openPage(origin: string, options: { javaScript?: boolean } = {}) {
  const page = await browser.newPage();
  await page.setViewport({ width: 900, height: 900 });
  await page.setJavaScriptEnabled(options.javaScript ?? true);
  const requests: string[] = [];
  const errors: string[] = [];
  page.on("request", (request) => void requests.push(request.url()));
  page.on("pageerror", (error) => void errors.push(String(error))); // an exception the script did not catch
  await page.goto(`${origin}/`, { waitUntil: "load" });
  return {
    page,
    errors,
    /** Every request the page made went to the agent (data: URLs are not requests). */
    expectOnlyOrigin() {
      const elsewhere = requests.filter(
        (url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"),
      );
      expect(elsewhere).toEqual([]);
    },
  };
}

async function shot(page: Page, name: string) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/**
 * With UPDATE_SCREENSHOTS=1, the picture the tool's README shows (docs/console.png): the page from its top
 * to the end of the first capability's card, after a paid job. test/scripts/docs-screenshot.test.ts checks it.
 */
async function docsShot(page: Page) {
  if (process.env.UPDATE_SCREENSHOTS !== "1") return;
  const bottom = (await page.$eval(
    "section.capability",
    (el: { getBoundingClientRect(): { bottom: number } }) =>
      el.getBoundingClientRect().bottom + window.scrollY,
  )) as number;
  await page.evaluate("window.scrollTo(0, 0)");
  await page.screenshot({
    path: DOCS_SCREENSHOT,
    clip: { x: 0, y: 0, width: 900, height: Math.ceil(bottom) + 16 },
    captureBeyondViewport: true,
  });
  console.log(`wrote ${DOCS_SCREENSHOT}`);
}

async function axeViolations(page: Page) {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern: nothing added to the page.
  await page.evaluate(AXE_SOURCE);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"] })`)) as {
    violations: Array<{
      id: string;
      impact: string;
      help: string;
      nodes: Array<{ target: unknown }>;
    }>;
  };
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`,
    );
}

const resultText = (page: Page, capability: string) =>
  page.$eval(`#result-${capability}`, (e) => (e as unknown as El).innerText);

async function submit(page: Page, capability: string) {
  await page.click(`#cap-${capability} button[type=submit]`);
  await page.waitForFunction(
    (c) => {
      const area = document.getElementById(`result-${c}`)!;
      const form = document.querySelector(`form[data-capability="${c}"]`)!;
      return (
        (!area.hidden && !form.hasAttribute("aria-busy")) || form.querySelector("[aria-invalid]")
      );
    },
    { timeout: 60_000 },
    capability,
  );
}

/** Sends the page's paid request to the server (it settles), then drops its answer on the way back. */
function settleThenLose(request: HTTPRequest): void {
  void fetch(request.url(), {
    method: "POST",
    headers: request.headers(),
    body: request.postData() ?? "",
  })
    .then((r) => r.text())
    .then(() => request.abort("connectionreset"));
}

describe("the console in dev mode", () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    server = await startServer(projectDir, {
      PATH: process.env.PATH ?? "",
      SERVICE_DEV_MODE: "true",
    });
  });
  afterAll(() => server?.stop());

  it("curl's */* and JSON clients keep today's answer at GET /; a browser gets the page with a strict CSP", async () => {
    const curl = await fetch(`${server.url}/`, { headers: { Accept: "*/*" } });
    expect(curl.headers.get("content-type")).toMatch(/^application\/json/);
    const html = await fetch(`${server.url}/`, {
      headers: { Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" },
    });
    expect(html.status).toBe(200);
    expect(html.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = html.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
    expect(csp).not.toContain("unsafe-inline");
    const text = await html.text();
    expect(text).not.toMatch(/\son[a-z]+=/i); // no inline event handler
    expect(text).not.toMatch(/(src|href)="(https?:)?\/\//); // nothing from elsewhere
  });

  it("lists every capability with price, fields and output, readable with JavaScript off", async () => {
    const { page, expectOnlyOrigin } = await openPage(server.url, { javaScript: false });
    const text = await page.$eval("body", (e) => (e as unknown as El).innerText);
    expect(text).toContain(manifest.name);
    expect(text).toContain(manifest.description);
    expect(text).toContain(manifest.version);
    for (const [name, capability] of Object.entries(manifest.capabilities)) {
      const section = await page.$eval(`#cap-${name}`, (e) => (e as unknown as El).innerText);
      expect(section).toContain(name);
      expect(section).toContain(`${capability.pricing.amount} USDC`);
      for (const field of Object.keys(capability.input_schema)) expect(section).toContain(field);
      expect(section).toContain(`npm run call -- ${name}`); // how to run it without JavaScript
    }
    await shot(page, "dev-javascript-off");
    expectOnlyOrigin();
    await page.close();
  });

  it("runs a filled form and shows the output, status and time; a value the handler refuses shows its message beside the field", async () => {
    const { page, errors, expectOnlyOrigin } = await openPage(server.url);
    const titles = await page.$$eval("section.capability h2", (hs) => hs.map((h) => h.textContent));
    expect(titles).toEqual(Object.keys(manifest.capabilities));

    await page.type("#f-summarize-text", "hello console");
    await submit(page, "summarize");
    const shown = await resultText(page, "summarize");
    expect(shown).toContain('"summary": "HELLO CONSOLE"');
    expect(shown).toMatch(/Status: 200 completed/);
    expect(shown).toMatch(/Time: \d+\.\d\d s/);
    await shot(page, "dev-run");

    await page.$eval("#f-summarize-text", (e) => ((e as unknown as El).value = ""));
    await page.type("#f-summarize-text", "forbidden");
    await submit(page, "summarize");
    const beside = await page.$eval("#f-summarize-text-error", (e) => ({
      hidden: (e as unknown as El).hidden,
      text: e.textContent,
    }));
    expect(beside).toEqual({
      hidden: false,
      text: '"forbidden" is a word this agent does not summarize',
    });
    expect(await page.$eval("#f-summarize-text", (e) => e.getAttribute("aria-invalid"))).toBe(
      "true",
    );
    expect(await resultText(page, "summarize")).toMatch(/Status: 400 failed/);
    await shot(page, "dev-server-validation");

    // Client-side checks follow the schema's rules: a SKU off its pattern is named before anything is sent.
    await page.type("#f-classify-review-review", "great");
    await page.type("#f-classify-review-product-sku", "abc");
    await page.click("#cap-classify-review button[type=submit]");
    await page.waitForSelector("#f-classify-review-product-sku-error:not([hidden])");
    expect(
      await page.$eval("#f-classify-review-product-sku-error", (e) => e.textContent),
    ).toContain("must match pattern");
    expect(await page.$eval("#result-classify-review", (e) => (e as unknown as El).hidden)).toBe(
      true,
    );
    // Focus moved to the field named.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe(
      "f-classify-review-product-sku",
    );
    await page.$eval("#f-classify-review-product-sku", (e) => ((e as unknown as El).value = ""));
    await page.type("#f-classify-review-product-sku", "ABC-1234");
    await page.click("#f-classify-review-languages-1"); // "de"
    await submit(page, "classify-review");
    expect(await resultText(page, "classify-review")).toMatch(/Status: 200 completed/);

    expect(await axeViolations(page)).toEqual([]);
    await page.setViewport({ width: 360, height: 740 }); // a narrow phone screen: nothing wider than it
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      360,
    );
    await shot(page, "dev-narrow");
    expect(errors).toEqual([]);
    expectOnlyOrigin();
    await page.close();
  });

  it("works from the keyboard alone: fields then the button in reading order, Enter runs the job", async () => {
    const { page } = await openPage(server.url);
    await page.focus("#f-summarize-text");
    await page.keyboard.type("by keyboard");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("f-summarize-max_words");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Run");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() =>
      /Status: 200/.test(document.getElementById("result-summarize").innerText),
    );
    expect(await resultText(page, "summarize")).toContain('"summary": "BY KEYBOARD"');
    await page.close();
  });

  it("CONSOLE=off answers GET / as before, for browsers too", async () => {
    const off = await startServer(projectDir, {
      PATH: process.env.PATH ?? "",
      SERVICE_DEV_MODE: "true",
      CONSOLE: "off",
    });
    try {
      const res = await fetch(`${off.url}/`, { headers: { Accept: "text/html" } });
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    } finally {
      await off.stop();
    }
  });
});

describe("the console in production, paying with a browser wallet on anvil with Circle's USDC", () => {
  const payerKey = PAYER_KEYS[3];
  const payer = privateKeyToAccount(payerKey).address;
  let server: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    server = await startServer(projectDir, productionEnv(PAYEE, { X402_SETTLER_KEY: SETTLER_KEY }));
  });
  afterAll(() => server?.stop());

  /**
   * A page with a test EIP-1193 wallet injected before the page loads: it forwards to the anvil node from the
   * test process (so the page itself talks to its own origin only) and records every method asked.
   */
  async function walletPage() {
    const page = await browser.newPage();
    const calls: string[] = [];
    await page.exposeFunction("__testWallet", async (request: string) => {
      const { method, params } = JSON.parse(request) as { method: string; params?: unknown[] };
      calls.push(method);
      if (method === "eth_requestAccounts" || method === "eth_accounts")
        return JSON.stringify({ result: [payer] });
      if (method === "wallet_switchEthereumChain") {
        const wanted = Number((params?.[0] as { chainId: string }).chainId);
        return JSON.stringify(
          wanted === chain.chainId
            ? { result: null }
            : { error: { code: 4902, message: "unknown chain" } },
        );
      }
      if (method !== "eth_chainId" && method !== "eth_signTypedData_v4")
        return JSON.stringify({ error: { code: 4200, message: `${method} is not supported` } });
      const answer = await fetch(chain.rpcUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: params ?? [] }),
      });
      return JSON.stringify(await answer.json());
    });
    await page.evaluateOnNewDocument(() => {
      const forward = (window as unknown as { __testWallet: (r: string) => Promise<string> })
        .__testWallet;
      (window as unknown as { ethereum: unknown }).ethereum = {
        async request(args: { method: string; params?: unknown[] }) {
          const answer = JSON.parse(await forward(JSON.stringify(args))) as {
            result?: unknown;
            error?: { code: number; message: string };
          };
          if (answer.error)
            throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
          return answer.result;
        },
      };
    });
    const requests: string[] = [];
    page.on("request", (request) => void requests.push(request.url()));
    return {
      page,
      calls,
      expectOnlyOrigin: () =>
        expect(
          requests.filter((u) => !u.startsWith(`${server.url}/`) && !u.startsWith("data:")),
        ).toEqual([]),
    };
  }

  it("Pay shows the output, the amount and the settlement transaction; the payee gains exactly the price, once", async () => {
    const { page, calls, expectOnlyOrigin } = await walletPage();
    await page.goto(`${server.url}/`);
    expect(await page.$eval("#cap-summarize button[type=submit]", (b) => b.textContent)).toBe(
      "Pay 0.01 USDC and run",
    );
    const [payeeBefore, payerBefore] = [await balance(PAYEE), await balance(payer)];
    await page.type("#f-summarize-text", "paid from a browser");
    await shot(page, "production-before-pay");
    await submit(page, "summarize");
    const shown = await resultText(page, "summarize");
    expect(shown).toContain('"summary": "PAID FROM A BROWSER"');
    expect(shown).toContain("Paid: 0.01 USDC");
    const tx = /Settlement transaction: (0x[0-9a-f]{64})/.exec(shown)?.[1];
    expect(tx, shown).toBeDefined();
    // anvil on this machine (X402_RPC_URL on loopback, as dev:paid's): no public explorer has seen the
    // transaction, so it is shown plainly, saying the chain is local; the header names network and payee.
    expect(await page.$("a.tx")).toBeNull();
    expect(shown).toContain("Chain: a local chain on the agent's machine");
    const header = await page.$eval("header", (e) => (e as unknown as El).innerText);
    expect(header).toContain(`base-sepolia (eip155:84532), paid to ${PAYEE}`);
    expect(calls).toEqual([
      "eth_requestAccounts",
      "eth_chainId",
      "eth_chainId",
      "eth_signTypedData_v4",
    ]);
    expect(await balance(PAYEE)).toBe(payeeBefore + 10_000n);
    expect(await balance(payer)).toBe(payerBefore - 10_000n);
    await shot(page, "production-paid");
    await docsShot(page);
    expect(await axeViolations(page)).toEqual([]);
    expectOnlyOrigin();
    await page.close();
  });

  /** The payment-identifier id a PAYMENT-SIGNATURE header carries. */
  const paymentIdOf = (header: string) =>
    JSON.parse(Buffer.from(header, "base64").toString()).extensions?.["payment-identifier"]?.info
      ?.id;

  /**
   * Pays summarize with `text` from a wallet page whose first paid request `first` handles (its answer lost,
   * or answered for the server); every later one goes through, after noting what the result area shows then.
   * Waits for the output; returns the payment headers sent, those texts and the balances' changes.
   */
  async function paidAfterFirst(text: string, first: (request: HTTPRequest) => void) {
    const { page, calls } = await walletPage();
    await page.setRequestInterception(true);
    const sent: string[] = [];
    const shownAtResend: string[] = [];
    page.on("request", (request: HTTPRequest) => {
      const header = request.headers()["payment-signature"];
      if (request.method() !== "POST" || !header) return void request.continue();
      sent.push(header);
      if (sent.length === 1) return first(request);
      void page
        .evaluate(() => document.getElementById("result-summarize").innerText as string)
        .then((shown) => shownAtResend.push(shown))
        .finally(() => request.continue());
    });
    await page.goto(`${server.url}/`);
    const [payeeBefore, payerBefore] = [await balance(PAYEE), await balance(payer)];
    await page.type("#f-summarize-text", text);
    await page.click("#cap-summarize button[type=submit]");
    await page.waitForFunction(
      () => /Status: 200/.test(document.getElementById("result-summarize").innerText),
      { timeout: 60_000 },
    );
    const shown = await resultText(page, "summarize");
    const signatures = calls.filter((c) => c === "eth_signTypedData_v4").length;
    const paid = [(await balance(PAYEE)) - payeeBefore, payerBefore - (await balance(payer))];
    await page.close();
    return { sent, shownAtResend, shown, signatures, paid };
  }

  it("an answer lost after the payment settled is fetched again at once, saying so: the same signed payment and payment id, signed once, paid once", async () => {
    // The paid request reaches the server and settles; its answer never reaches the page.
    const r = await paidAfterFirst("lost then found", settleThenLose);
    expect(r.shown).toContain('"summary": "LOST THEN FOUND"');
    expect(r.shownAtResend[0]).toMatch(
      /Retrying.*same signed payment again in 1 s \(retry 1 of 3\)/s,
    );
    expect(r.sent).toHaveLength(2);
    expect(r.sent[1]).toBe(r.sent[0]); // the same signed payload, byte for byte
    expect(paymentIdOf(r.sent[0]!)).toMatch(/^pay_[0-9a-f]{32}$/);
    expect([r.signatures, ...r.paid]).toEqual([1, 10_000n, 10_000n]);
  });

  // The service holds a job's answer while its payment's settlement is unconfirmed (a 402 saying so, no
  // offer); the identical request gets it once confirmed. The page used to show that 402 and forget the
  // payment, so a buyer who paid again was charged twice. Here the page's first request is answered with
  // such a 402 (the request never reaches the server), and the page must send the same payment again.
  it("a 402 saying the settlement is unconfirmed: the same signed payment is sent again and its answer shown; signed once, paid once", async () => {
    const error =
      "payment settlement is unconfirmed, so the result is withheld for now: the facilitator did not answer within 30 s; the payment may or may not have been settled";
    const r = await paidAfterFirst("held then shown", (request) => {
      const body = JSON.stringify({ status: "failed", error_type: "payment", error });
      // With Retry-After, as the service sends it: the page waits that long, and still says why.
      const headers = { "retry-after": "1" };
      void request.respond({ status: 402, contentType: "application/json", headers, body });
    });
    expect(r.shown).toContain('"summary": "HELD THEN SHOWN"');
    expect(r.shownAtResend[0]).toMatch(
      /settlement is not confirmed yet.*same signed payment again in 1 s/s,
    );
    expect(r.sent).toHaveLength(2);
    expect(r.sent[1]).toBe(r.sent[0]);
    expect([r.signatures, ...r.paid]).toEqual([1, 10_000n, 10_000n]);
  });

  it("an answer lost after the payment settled, and its automatic resends lost too, is fetched again on request (Pay meanwhile starts no new payment): same signed payment, paid once", async () => {
    const { page, calls } = await walletPage();
    await page.setRequestInterception(true);
    const sent: string[] = [];
    const refetched: string[] = [];
    let duringRefetch: unknown;
    let posts = 0;
    page.on("request", (request: HTTPRequest) => {
      const header = request.headers()["payment-signature"];
      if (request.method() === "POST") posts++;
      if (request.method() !== "POST" || !header) return void request.continue();
      if (sent.length >= 4) {
        // Fetched again on request: what the form shows while it runs.
        refetched.push(header);
        void page
          .evaluate(() => ({
            pay: document.querySelector("#cap-summarize button[type=submit]").disabled,
            again: document.querySelector("#result-summarize button.again").disabled,
            forget: document.querySelector("#result-summarize button.forget").disabled,
            busy: document
              .querySelector('form[data-capability="summarize"]')
              .getAttribute("aria-busy"),
          }))
          .then((state) => void (duringRefetch ??= state))
          .finally(() => request.continue());
        return;
      }
      sent.push(header);
      if (sent.length > 1) return void request.abort("connectionreset"); // the resends are lost too
      // The paid request reaches the server and settles; its answer never reaches the page.
      settleThenLose(request);
    });
    await page.goto(`${server.url}/`);
    const [payeeBefore, payerBefore] = [await balance(PAYEE), await balance(payer)];
    await page.type("#f-summarize-text", "lost once");
    await page.click("#cap-summarize button[type=submit]");
    await page.waitForSelector("button.again", { timeout: 60_000 });
    expect(await resultText(page, "summarize")).toContain("Answer lost");
    expect(sent).toHaveLength(4); // the first request and three automatic resends
    expect(new Set(sent).size).toBe(1);
    expect(await balance(PAYEE)).toBe(payeeBefore + 10_000n); // it did settle
    await shot(page, "production-answer-lost");
    // Pay for another job meanwhile: it would replace the kept payment, so nothing is sent or signed; the page
    // offers the earlier job instead, and forgetting it only by a button that says what that may cost.
    const [postsBefore, callsBefore] = [posts, calls.length];
    await page.type("#f-summarize-text", " and another job");
    await submit(page, "summarize");
    expect(await resultText(page, "summarize")).toMatch(
      /earlier paid job for "summarize" has not been answered yet, so Pay started no new payment and nothing was signed/,
    );
    expect(await page.$eval("#result-summarize button.forget", (b) => b.textContent)).toBe(
      "Forget it (the payment may still be charged if the job ran)",
    );
    expect(await page.evaluate(() => document.activeElement.className)).toBe("again");
    expect([posts, calls.length]).toEqual([postsBefore, callsBefore]);
    expect(await axeViolations(page)).toEqual([]);
    // Clicked three times at once: one request, the same payment; Pay and the button disabled, the form busy.
    await page.evaluate(() => {
      const again = document.querySelector("button.again");
      for (let i = 0; i < 3; i++) again.click();
    });
    await page.waitForFunction(
      () => /Status: 200/.test(document.getElementById("result-summarize").innerText),
      {
        timeout: 60_000,
      },
    );
    expect(await resultText(page, "summarize")).toContain('"summary": "LOST ONCE"');
    expect(refetched).toEqual([sent[0]]);
    expect(duringRefetch).toEqual({ pay: true, again: true, forget: true, busy: "true" });
    expect(calls.filter((c) => c === "eth_signTypedData_v4")).toHaveLength(1);
    expect(await balance(PAYEE)).toBe(payeeBefore + 10_000n);
    expect(await balance(payer)).toBe(payerBefore - 10_000n);
    await page.close();
  });

  /**
   * The page paying through a 402 whose offers `change` rewrote (the server's own 402 otherwise): what it
   * shows, what the wallet was asked, and how much the payee and the payer gained. The page is closed
   * unless `keep`.
   */
  async function hostile(change: (entry: Record<string, unknown>) => unknown, keep = false) {
    const { page, calls } = await walletPage();
    await page.setRequestInterception(true);
    page.on("request", (request: HTTPRequest) => {
      if (request.method() !== "POST" || request.headers()["payment-signature"])
        return void request.continue();
      void (async () => {
        const real = await fetch(request.url(), {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: request.postData() ?? "",
        });
        const offer = JSON.parse(
          Buffer.from(real.headers.get("payment-required")!, "base64").toString(),
        ) as {
          accepts: Array<Record<string, unknown>>;
        };
        offer.accepts = offer.accepts.map(change) as Array<Record<string, unknown>>;
        await request.respond({
          status: 402,
          headers: { "PAYMENT-REQUIRED": Buffer.from(JSON.stringify(offer)).toString("base64") },
          contentType: "application/json",
          body: await real.text(),
        });
      })();
    });
    await page.goto(`${server.url}/`);
    const [payeeBefore, payerBefore] = [await balance(PAYEE), await balance(payer)];
    await page.type("#f-summarize-text", "hostile");
    await submit(page, "summarize");
    const text = await resultText(page, "summarize");
    const moved = [(await balance(PAYEE)) - payeeBefore, (await balance(payer)) - payerBefore];
    if (!keep) await page.close();
    return { page: keep ? page : undefined, text, calls, moved };
  }

  it("a tab reloaded while its paid request settles asks first, then fetches the answer again on request: the identical request, signed once, paid once", async () => {
    const { page, calls } = await walletPage();
    await page.setRequestInterception(true);
    const dialogs: string[] = [];
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.type());
      void dialog.accept();
    });
    const sent: Array<{ header: string; body: string }> = [];
    let settled: Promise<string> | undefined;
    let inFlight: () => void;
    const firstPaid = new Promise<void>((resolve) => (inFlight = resolve));
    page.on("request", (request: HTTPRequest) => {
      const header = request.headers()["payment-signature"];
      if (request.method() !== "POST" || !header) return void request.continue();
      sent.push({ header, body: request.postData() ?? "" });
      if (sent.length > 1) return void request.continue();
      // The paid request reaches the server and settles; the page is reloaded before its answer arrives.
      settled = fetch(request.url(), {
        method: "POST",
        headers: request.headers(),
        body: request.postData() ?? "",
      }).then((r) => r.text());
      inFlight();
    });
    await page.goto(`${server.url}/`);
    const [payeeBefore, payerBefore] = [await balance(PAYEE), await balance(payer)];
    await page.type("#f-summarize-text", "reloaded meanwhile");
    await page.click("#cap-summarize button[type=submit]");
    await firstPaid;
    await page.reload({ waitUntil: "load" });
    expect(dialogs).toEqual(["beforeunload"]); // leaving while paying asked first
    await page.waitForSelector("#result-summarize button.again", { timeout: 10_000 });
    expect(await resultText(page, "summarize")).toContain("Answer not shown");
    await settled;
    expect(await balance(PAYEE)).toBe(payeeBefore + 10_000n); // it did settle
    await page.focus("#result-summarize button.again"); // from the keyboard
    await page.keyboard.press("Enter");
    await page.waitForFunction(
      () => /Status: 200/.test(document.getElementById("result-summarize").innerText),
      { timeout: 60_000 },
    );
    expect(await resultText(page, "summarize")).toContain('"summary": "RELOADED MEANWHILE"');
    expect(sent).toHaveLength(2);
    expect(sent[1]).toEqual(sent[0]); // the same body and signed payment, byte for byte
    expect(calls.filter((c) => c === "eth_signTypedData_v4")).toHaveLength(1);
    expect(await page.evaluate(() => window.sessionStorage.length)).toBe(0); // shown: nothing kept
    expect(await balance(PAYEE)).toBe(payeeBefore + 10_000n);
    expect(await balance(payer)).toBe(payerBefore - 10_000n);
    await page.close();
  });

  const OTHER = "0x9999999999999999999999999999999999999999";
  it.each([
    [
      "asks to be paid to another payee",
      (entry: Record<string, unknown>) => ({ ...entry, payTo: OTHER }),
      /asks to be paid to 0x9{40}, not 0x[0-9a-fA-F]{40}, the payee this page shows for base-sepolia/,
    ],
    [
      "asks to be paid in another token",
      (entry: Record<string, unknown>) => ({
        ...entry,
        asset: OTHER,
        extra: { name: "Tether", version: "1" },
      }),
      /asks to be paid in the token 0x9{40}, not base-sepolia \(eip155:84532\)'s USDC/,
    ],
    [
      "asks to be paid on a chain the page does not declare",
      (entry: Record<string, unknown>) => ({ ...entry, network: "eip155:1" }),
      /asks to be paid on eip155:1, a network this page does not declare/,
    ],
    [
      "asks less than the price the page shows",
      (entry: Record<string, unknown>) => ({ ...entry, amount: "1" }),
      /asks 0.000001 USDC for "summarize", not the 0.01 USDC this page shows/,
    ],
  ])(
    "a hostile 402 that %s is refused before the wallet is asked anything; nothing moves",
    async (_what, change, message) => {
      const { text, calls, moved } = await hostile(change);
      expect(text).toMatch(message);
      expect(text).toContain("nothing was signed");
      expect(calls).toEqual([]);
      expect(moved).toEqual([0n, 0n]);
    },
  );

  it.each([
    [
      "a payment window of ten years",
      (entry: Record<string, unknown>) => ({ ...entry, maxTimeoutSeconds: 10 * 365 * 86_400 }),
      /stays valid for 315360000 s, longer than the job's deadline plus an hour/,
    ],
    [
      "a fractional payment window",
      (entry: Record<string, unknown>) => ({ ...entry, maxTimeoutSeconds: 1.5 }),
      /ends at \d+\.5, not whole Unix seconds/,
    ],
  ])(
    "a hostile 402 offering %s: the authorization's validBefore is refused before the wallet is asked to sign",
    async (_what, change, message) => {
      const { text, calls, moved } = await hostile(change);
      expect(text).toMatch(message);
      expect(text).toContain("nothing was signed");
      expect(calls).not.toContain("eth_signTypedData_v4");
      expect(moved).toEqual([0n, 0n]);
    },
  );

  it.each([
    [
      "asks more than the price the page shows",
      (entry: Record<string, unknown>): Record<string, unknown> => ({
        ...entry,
        amount: "1000000",
      }),
      /asks 1 USDC for "summarize", more than the 0.01 USDC this page shows/,
    ],
    [
      "states its amount as a JSON number",
      (entry: Record<string, unknown>) => ({ ...entry, amount: 1000000 }),
      /"amount" \(the amount an x402 v2 payer signs\) is the number 1000000/,
    ],
    [
      "states two amounts",
      (entry: Record<string, unknown>) => ({ ...entry, maxAmountRequired: "1000000" }),
      /the offer states two amounts/,
    ],
  ])(
    "a hostile 402 that %s is refused before anything is signed; nothing moves",
    async (what, change, message) => {
      const { page, text, calls, moved } = await hostile(change, true);
      expect(text).toMatch(message);
      expect(text).toContain("nothing was signed");
      expect(calls).not.toContain("eth_signTypedData_v4");
      expect(moved).toEqual([0n, 0n]);
      await shot(page!, `production-hostile-${what.replace(/\W+/g, "-")}`);
      await page!.close();
    },
  );

  it("a kept paid job is forgotten only by its own button, which says the payment may still be charged; Pay then starts anew", async () => {
    const { page } = await openPage(server.url);
    const kept = { body: "{}", payment: "x", amount: "10000", network: "eip155:84532" };
    await page.evaluate((k) => {
      const deadline = Math.floor(Date.now() / 1000) + 60;
      window.sessionStorage.setItem(
        "create-agent-console-paid:summarize",
        JSON.stringify({ ...k, deadline }),
      );
    }, kept);
    await page.reload({ waitUntil: "load" });
    await page.click("#result-summarize button.forget");
    expect(await resultText(page, "summarize")).toMatch(
      /^Forgotten: .*its payment may have been charged/,
    );
    expect(await page.evaluate(() => window.sessionStorage.length)).toBe(0);
    expect(await page.evaluate(() => document.activeElement.textContent)).toBe(
      "Pay 0.01 USDC and run",
    );
    await page.type("#f-summarize-text", "anew");
    await page.click("#cap-summarize button[type=submit]");
    await page.waitForSelector("#nowallet-summarize:not([hidden])"); // on to paying: this page has no wallet
    await page.close();
  });

  it("without a wallet the page says what is needed and how else to pay (any x402 client)", async () => {
    const { page, expectOnlyOrigin } = await openPage(server.url);
    await page.type("#f-summarize-text", "no wallet");
    await page.click("#cap-summarize button[type=submit]");
    await page.waitForSelector("#nowallet-summarize:not([hidden])");
    const note = await page.$eval("#nowallet-summarize", (e) => (e as unknown as El).innerText);
    expect(note).toContain("EIP-1193");
    // A visitor has no project to run `npm run call` in: any x402 client, told how by /llms.txt.
    expect(note).not.toContain("npm run call");
    expect(note).toContain("any x402 client");
    expect(await page.$eval("#nowallet-summarize a", (a) => a.getAttribute("href"))).toBe(
      "/llms.txt",
    );
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("nowallet-summarize");
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, "production-no-wallet");
    expectOnlyOrigin();
    await page.close();
  });
});
