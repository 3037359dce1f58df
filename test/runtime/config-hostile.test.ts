// Every setting the project's .env.example names, given hostile values one at a time, in production and in
// dev mode: createApp takes the value or refuses it with the ConfigError naming the setting, never another
// error (PUBLIC_URL=http://host:99999 once passed the checks and crashed it with a TypeError).
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import { ConfigError } from "../../templates/runtime/config.js";
import { captureLogger, makeAgent, PAY_TO } from "./helpers.js";

const PROD = {
  PAY_TO,
  X402_NETWORK: "base-sepolia",
  X402_FACILITATOR_URL: "https://facilitator.example.com",
};
const DEV = { SERVICE_DEV_MODE: "true" };
/** The settings .env.example documents (`NAME=`, or commented out as `# NAME=`), and the required ones. */
const SETTINGS = [
  ...new Set([
    ...Object.keys(PROD),
    ...[
      ...readFileSync("templates/project/_env.example.hbs", "utf8").matchAll(
        /^(?:# ?)?([A-Z][A-Z0-9_]+)=/gm,
      ),
    ].map((m) => m[1]!),
  ]),
];
const HOSTILE = [
  "",
  " ",
  "-1",
  "0.5",
  "1e3",
  "NaN",
  "Infinity",
  "99999999999999999999999",
  "0x",
  "[zz]",
  "http://[zz]",
  "http://a:99999",
  "redis://:@",
  "{}",
  "[]",
  "\u0000",
  "a,b,,",
  "solana",
  "eip155:",
  "true",
  "x".repeat(5000),
];

// createApp starts lazy imports (metrics, ledgers) that outlive it: let them finish before the file ends.
afterAll(() => sleep(1000));

it("takes or refuses (ConfigError) every hostile value of every setting, never crashes", () => {
  expect(SETTINGS.length).toBeGreaterThan(40);
  const crashed: string[] = [];
  for (const name of SETTINGS)
    for (const value of HOSTILE)
      for (const [mode, base] of [
        ["production", PROD],
        ["dev mode", DEV],
      ] as const) {
        try {
          createApp(makeAgent(), { env: { ...base, [name]: value }, logger: captureLogger() });
        } catch (err) {
          if (!(err instanceof ConfigError))
            crashed.push(`${name}=${JSON.stringify(value).slice(0, 30)} (${mode}): ${String(err)}`);
        }
      }
  expect(crashed).toEqual([]);
}, 60_000);
