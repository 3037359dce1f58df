// Some Node builds' OpenSSL have no secp256k1. Reproduced here by taking the curve out of node:crypto
// (getCurves, createECDH, ECDH.convertKey answer as Node does for an unknown curve) before the runtime
// loads, in this test file's own module graph: the self-test picks the pure-JS path, the server says so
// once at start-up, recovery still agrees with @noble/curves, and a good payer is paid for, not refused
// as "malformed". Also: an OpenSSL that answers wrongly after start-up changes no answer.
import { createRequire, syncBuiltinESMExports } from "node:module";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { adversarialCases, forgedCases, nobleRecover, signedCases } from "./secp256k1-oracle.js";

type ConvertKey = (key: Buffer, curve: string, ...rest: unknown[]) => Buffer | string;
const crypto = createRequire(import.meta.url)("node:crypto") as {
  getCurves: () => string[];
  createECDH: (curve: string) => unknown;
  ECDH: { convertKey: ConvertKey };
};
const real = {
  getCurves: crypto.getCurves,
  createECDH: crypto.createECDH,
  convertKey: crypto.ECDH.convertKey,
};

/** What Node throws for a curve its OpenSSL does not have. */
function invalidCurve(): never {
  throw Object.assign(new TypeError("Invalid EC curve name"), { code: "ERR_CRYPTO_INVALID_CURVE" });
}

function removeCurve(): void {
  crypto.getCurves = () => real.getCurves().filter((curve) => curve !== "secp256k1");
  crypto.createECDH = (curve) => (curve === "secp256k1" ? invalidCurve() : real.createECDH(curve));
  crypto.ECDH.convertKey = (key, curve, ...rest) =>
    curve === "secp256k1" ? invalidCurve() : real.convertKey(key, curve, ...rest);
  syncBuiltinESMExports();
}

function restore(): void {
  Object.assign(crypto, { getCurves: real.getCurves, createECDH: real.createECDH });
  crypto.ECDH.convertKey = real.convertKey;
  syncBuiltinESMExports();
}

const runtime = "../../templates/runtime/payments/evm/secp256k1.js";
type Secp256k1 = typeof import("../../templates/runtime/payments/evm/secp256k1.js");

async function expectAgreement(recoverAddress: Secp256k1["recoverAddress"]): Promise<void> {
  const cases = [...(await adversarialCases()), ...(await signedCases(10)), ...forgedCases(60)];
  for (const { name, digest, signature } of cases)
    expect(recoverAddress(digest, signature), name).toBe(nobleRecover(digest, signature));
}

afterAll(restore);

describe("a Node whose OpenSSL has no secp256k1", () => {
  let helpers: typeof import("./helpers.js");
  let secp: Secp256k1;

  beforeAll(async () => {
    removeCurve();
    vi.resetModules();
    // The runtime (through the test helpers) loads now, seeing node:crypto without the curve.
    helpers = await import("./helpers.js");
    secp = (await import(runtime)) as Secp256k1;
    expect(real.getCurves()).toContain("secp256k1"); // the real one is untouched
    expect(crypto.getCurves()).not.toContain("secp256k1");
  });

  it("recovers signers with the pure-JS path, exactly as @noble/curves does", async () => {
    expect(secp.recoveryPath).toEqual({ path: "pure-js" });
    await expectAgreement(secp.recoverAddress);
  });

  it("accepts a good payment (not 'malformed'), runs and settles the job, and logs the path once", async () => {
    const { anvilAccount, job, logText, makeAgent, offerV2, post, production, signAuthorization } =
      helpers;
    const agent = makeAgent();
    const options = production();
    const app = await helpers.startApp(agent, options);
    try {
      const payload = await signAuthorization(anvilAccount());
      const res = await post(app.url, job("echo", { text: "paid" }), {
        "payment-signature": helpers.v2Header(offerV2(), payload),
      });
      expect(res.body).toMatchObject({ status: "completed", output: { text: "paid" } });
      expect(res.status).toBe(200);
      expect(options.payment.settler.settled()).toBe(1);
      const said = app.logger.lines.filter((l) => /secp256k1/.test(l.message));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatchObject({ level: "info" });
      expect(said[0]!.message).toMatch(/no secp256k1.*pure JS/);
      expect(logText(app.logger)).not.toMatch(/self-test failed/);
    } finally {
      await app.close();
    }
  });
});

describe("a Node whose OpenSSL has secp256k1", () => {
  it("uses it, and an answer from it that is not the curve point changes nothing", async () => {
    restore();
    vi.resetModules();
    const secp = (await import(runtime)) as Secp256k1;
    expect(secp.recoveryPath).toEqual({ path: "openssl" });
    await expectAgreement(secp.recoverAddress);
    // After the self-test, OpenSSL starts answering wrongly: the other parity's point, then garbage.
    let call = 0;
    crypto.ECDH.convertKey = (key, curve, ...rest) => {
      const point = real.convertKey(key, curve, ...rest) as Buffer;
      if (call++ % 2 === 0) return Buffer.concat([point.subarray(0, 33), Buffer.alloc(32, 0xab)]);
      const flipped = Buffer.from(key);
      flipped[0] = flipped[0] === 2 ? 3 : 2;
      return real.convertKey(flipped, curve, ...rest);
    };
    try {
      await expectAgreement(secp.recoverAddress);
      expect(call).toBeGreaterThan(0);
    } finally {
      restore();
    }
  });
});
