/**
 * GET / for browsers: the console page (page.ts) when the request asks for HTML before JSON, as browsers
 * do; every other client (curl's * / *, programs asking for JSON) gets what it got before. CONSOLE=off
 * turns the page off. Part of your project: edit freely.
 */
import type express from "express";
import { ConfigError } from "../ops/config.js";
import type { AgentDefinition } from "../types.js";
import { CONSOLE_CSP, renderConsolePage } from "./page.js";

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
  options: { devMode: boolean; serviceVersion: string; env?: NodeJS.ProcessEnv },
): void {
  if (!consoleEnabled(options.env)) return;
  let page: string | undefined; // built on the first request that wants it
  app.get("/", (req, res, next) => {
    res.vary("Accept");
    if (req.accepts(["application/json", "text/html"]) !== "text/html") return next();
    page ??= renderConsolePage(agent, options);
    res
      .status(200)
      .set({
        "Content-Type": "text/html; charset=utf-8",
        "Content-Security-Policy": CONSOLE_CSP,
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
      })
      .send(page);
  });
}
