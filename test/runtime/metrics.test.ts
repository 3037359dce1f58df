import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metricsRoute, startMetricsServer } from "../../templates/runtime/metrics/endpoint.js";
import { noMetrics } from "../../templates/runtime/ops/metrics.js";
import { createPrometheusMetrics } from "../../templates/runtime/metrics/prometheus.js";
import { expectSamples } from "./metrics-text.js";

const PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8";

describe("createPrometheusMetrics", () => {
  it("counts jobs, refusals, settlements, earnings and ledger errors with their labels", async () => {
    const { metrics, render } = createPrometheusMetrics({ defaultMetrics: false });
    metrics.job("echo", "completed");
    metrics.job("echo", "completed");
    metrics.job("echo", "deadline");
    metrics.job("", "capability");
    metrics.paymentRefused("expired");
    metrics.settlement("echo", "settled", 0.3, 10_000n, "eip155:84532");
    metrics.settlement("echo", "failed", 1.5, undefined, "eip155:84532");
    metrics.settlement("echo", "uncertain", Number.NaN, undefined, "eip155:84532");
    metrics.ledgerError("claim");

    const text = await render();
    expectSamples(text, [
      'agent_jobs_total{capability="echo",outcome="completed"} 2',
      'agent_jobs_total{capability="echo",outcome="deadline"} 1',
      'agent_jobs_total{capability="(unknown)",outcome="capability"} 1',
      'agent_payment_refusals_total{reason="expired"} 1',
      'agent_settlements_total{capability="echo",result="settled",network="eip155:84532"} 1',
      'agent_settlements_total{capability="echo",result="failed",network="eip155:84532"} 1',
      'agent_settlements_total{capability="echo",result="uncertain",network="eip155:84532"} 1',
      'agent_settlement_duration_seconds_bucket{le="0.25",capability="echo"} 0',
      'agent_settlement_duration_seconds_bucket{le="0.5",capability="echo"} 1',
      'agent_settlement_duration_seconds_bucket{le="+Inf",capability="echo"} 2',
      'agent_settlement_duration_seconds_count{capability="echo"} 2',
      'agent_usdc_earned_total{capability="echo",network="eip155:84532"} 0.01',
      'agent_ledger_errors_total{operation="claim"} 1',
      "# HELP agent_jobs_total ",
      "# TYPE agent_handler_duration_seconds histogram",
    ]);
    // No process metrics when asked not to.
    expect(text).not.toContain("process_cpu");
  });

  it("adds earnings only for settled payments", async () => {
    const { metrics, render } = createPrometheusMetrics({ defaultMetrics: false });
    metrics.settlement("echo", "settled", 0.1, 10_000n, "eip155:84532");
    metrics.settlement("echo", "settled", 0.1, 2_500_000n, "eip155:84532");
    metrics.settlement("echo", "failed", 0.1, 10_000n, "eip155:84532");
    metrics.settlement("echo", "settled", 0.1, 30_000n, "eip155:421614");
    const text = await render();
    expect(text).toContain(
      'agent_usdc_earned_total{capability="echo",network="eip155:84532"} 2.51',
    );
    expect(text).toContain(
      'agent_usdc_earned_total{capability="echo",network="eip155:421614"} 0.03',
    );
  });

  it("tracks handlers in flight and their duration", async () => {
    const { metrics, render } = createPrometheusMetrics({ defaultMetrics: false });
    const endA = metrics.handlerStarted("echo");
    const endB = metrics.handlerStarted("echo");
    expect(await render()).toContain("agent_handlers_in_flight 2");
    endA();
    endA(); // a second call does nothing
    expect(await render()).toContain("agent_handlers_in_flight 1");
    endB();
    const text = await render();
    expect(text).toContain("agent_handlers_in_flight 0");
    expect(text).toContain('agent_handler_duration_seconds_count{capability="echo"} 2');
    expect(text).toContain('agent_handler_duration_seconds_bucket{le="300",capability="echo"} 2');
  });

  it("tracks abandoned handlers until they stop", async () => {
    const { metrics, render } = createPrometheusMetrics({ defaultMetrics: false });
    const stopped = metrics.handlerAbandoned("echo");
    expect(await render()).toContain("agent_handlers_abandoned 1");
    stopped();
    stopped();
    expect(await render()).toContain("agent_handlers_abandoned 0");
  });

  it("gives each instance its own registry, default metrics included", async () => {
    const a = createPrometheusMetrics();
    const b = createPrometheusMetrics();
    a.metrics.job("echo", "completed");
    expect(await a.render()).toContain('agent_jobs_total{capability="echo",outcome="completed"} 1');
    const other = await b.render();
    expect(other).not.toContain('capability="echo"');
    expect(other).toContain("process_cpu_user_seconds_total");
    expect(other).toContain("nodejs_heap_size_used_bytes");
    expect(a.contentType).toBe(PROMETHEUS_TYPE);
  });

  it("prefixes every name when asked", async () => {
    const { metrics, render } = createPrometheusMetrics({ prefix: "myagent_" });
    metrics.job("echo", "completed");
    const text = await render();
    expect(text).toContain('myagent_agent_jobs_total{capability="echo",outcome="completed"} 1');
    expect(text).toContain("myagent_process_cpu_user_seconds_total");
    expect(() => createPrometheusMetrics({ prefix: "bad prefix" })).toThrow(/prefix/);
  });

  it("bounds label values whatever callers pass", async () => {
    const { metrics, render } = createPrometheusMetrics({ defaultMetrics: false });
    for (let i = 0; i < 300; i++) metrics.ledgerError(`op${i}`);
    const text = await render();
    expect(text).toContain('agent_ledger_errors_total{operation="(other)"} 100');
    expect(text.match(/agent_ledger_errors_total\{/g)).toHaveLength(201);
  });

  it("noMetrics does nothing", () => {
    noMetrics.job("echo", "completed");
    noMetrics.settlement("echo", "settled", 1, 1n);
    noMetrics.handlerStarted("echo")();
    noMetrics.handlerAbandoned("echo")();
    noMetrics.paymentRefused("expired");
    noMetrics.ledgerError("claim");
  });
});

describe("metricsRoute", () => {
  const TOKEN = "s3cret-metrics-token";
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const prometheus = createPrometheusMetrics({ defaultMetrics: false });
    prometheus.metrics.job("echo", "completed");
    const app = express();
    app.all("/metrics", metricsRoute(prometheus, TOKEN));
    server = app.listen(0, "127.0.0.1");
    await once(server, "listening");
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("refuses without a token", async () => {
    const res = await fetch(url);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: "failed", error_type: "validation" });
    expect(typeof body.error).toBe("string");
  });

  it.each([
    ["a wrong token", `Bearer ${TOKEN}x`],
    ["a prefix of the token", `Bearer ${TOKEN.slice(0, 5)}`],
    ["another scheme", `Basic ${TOKEN}`],
    ["an empty bearer", "Bearer "],
    ["the bare token", TOKEN],
  ])("refuses %s", async (_name, authorization) => {
    const res = await fetch(url, { headers: { authorization } });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await res.json()).toMatchObject({ status: "failed", error_type: "validation" });
  });

  it("serves the text with the right token", async () => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(PROMETHEUS_TYPE);
    expect(await res.text()).toContain('agent_jobs_total{capability="echo",outcome="completed"} 1');
  });

  it("accepts the scheme in any case", async () => {
    const res = await fetch(url, { headers: { authorization: `bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
  });

  it("answers GET only", async () => {
    const res = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
  });

  it("refuses an empty token at setup", () => {
    const source = createPrometheusMetrics({ defaultMetrics: false });
    expect(() => metricsRoute(source, "")).toThrow(/token/);
  });
});

describe("startMetricsServer", () => {
  it("answers GET /metrics and 404 elsewhere", async () => {
    const prometheus = createPrometheusMetrics();
    prometheus.metrics.paymentRefused("bad_signature");
    const server = await startMetricsServer(prometheus, { port: 0, host: "127.0.0.1" });
    try {
      const address = server.address() as AddressInfo;
      expect(address.address).toBe("127.0.0.1");
      const base = `http://127.0.0.1:${address.port}`;

      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(PROMETHEUS_TYPE);
      const text = await res.text();
      expect(text).toContain('agent_payment_refusals_total{reason="bad_signature"} 1');
      expect(text).toContain("process_resident_memory_bytes");

      expect((await fetch(`${base}/metrics?x=1`)).status).toBe(200);
      const missing = await fetch(`${base}/`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ status: "failed", error_type: "validation" });
      expect((await fetch(`${base}/metricsx`)).status).toBe(404);
      expect((await fetch(`${base}/metrics`, { method: "POST" })).status).toBe(405);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("can require a token too", async () => {
    const prometheus = createPrometheusMetrics({ defaultMetrics: false });
    const server = await startMetricsServer(prometheus, {
      port: 0,
      host: "127.0.0.1",
      token: "t0k",
    });
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
      expect((await fetch(url)).status).toBe(401);
      expect((await fetch(url, { headers: { authorization: "Bearer t0k" } })).status).toBe(200);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("rejects when it cannot listen", async () => {
    const prometheus = createPrometheusMetrics({ defaultMetrics: false });
    const first = await startMetricsServer(prometheus, { port: 0, host: "127.0.0.1" });
    try {
      const port = (first.address() as AddressInfo).port;
      await expect(startMetricsServer(prometheus, { port, host: "127.0.0.1" })).rejects.toThrow(
        /EADDRINUSE/,
      );
    } finally {
      await new Promise((resolve) => first.close(resolve));
    }
  });
});
