/**
 * GET / for browsers: the console page (page.ts) when the request asks for HTML before JSON, as browsers
 * do; every other client (curl's * / *, programs asking for JSON) gets what it got before. CONSOLE=off
 * turns the page off. The page's code (page.ts: its script, styles and fields) loads with the first
 * request that wants the page, so a server no browser visits never loads it. Part of your project:
 * edit freely.
 */
import type express from "express";
import { ConfigError } from "../ops/settings.js";
import type { AgentDefinition } from "../types.js";
import type { ConsoleFacts } from "./facts.js";

/** CONSOLE: "on" (the default) or "off"; anything else is a configuration error naming it. */
export function consoleEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const setting = env.CONSOLE;
  if (setting === undefined || setting === "" || setting === "on") return true;
  if (setting === "off") return false;
  throw new ConfigError([
    `CONSOLE is ${JSON.stringify(setting.slice(0, 40))}: set it to "off" (no page at GET /) or "on" (the default)`,
  ]);
}

export function mountConsole(
  app: express.Express,
  agent: AgentDefinition,
  options: {
    devMode: boolean;
    serviceVersion: string;
    env?: NodeJS.ProcessEnv;
  } & Partial<ConsoleFacts>,
): void {
  if (!consoleEnabled(options.env)) return;
  let page: Promise<{ html: string; csp: string }> | undefined; // built on the first request that wants it
  app.get("/", (req, res, next) => {
    res.vary("Accept");
    if (req.accepts(["application/json", "text/html"]) !== "text/html") return next();
    page ??= import("./page.js").then((m) => ({
      html: m.renderConsolePage(agent, options),
      csp: m.CONSOLE_CSP,
    }));
    page.then(
      ({ html, csp }) =>
        res
          .status(200)
          .set({
            "Content-Type": "text/html; charset=utf-8",
            "Content-Security-Policy": csp,
            "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff",
            "X-Frame-Options": "DENY",
          })
          .send(html),
      (err: unknown) => {
        page = undefined; // the next request tries again
        next(err);
      },
    );
  });
}
