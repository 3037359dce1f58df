import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  REQUEST_ID_HEADER,
  requestIdFrom,
  requestIds,
} from "../../templates/runtime/http/request-id.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let server: Server;
let port: number;

beforeAll(async () => {
  const app = express();
  app.use(requestIds());
  app.get("/ok", (_req, res) => {
    res.json({ seen: res.locals.requestId });
  });
  // Node refuses headers over 16 KB by default (431, before any handler); raise the limit so a
  // 900 KB id reaches the middleware.
  server = createServer({ maxHeaderSize: 2_000_000 }, app).listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function get(
  path: string,
  id?: string,
): Promise<{ status: number; id: string | null; body: string }> {
  const headers: Record<string, string> = id === undefined ? {} : { [REQUEST_ID_HEADER]: id };
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
  return { status: res.status, id: res.headers.get(REQUEST_ID_HEADER), body: await res.text() };
}

describe("requestIdFrom", () => {
  it("keeps sane ids", () => {
    for (const id of ["abc", "req-1.2_3:x@y/z+w=", "A".repeat(128)])
      expect(requestIdFrom(id)).toBe(id);
  });

  it("replaces insane or missing ids with a UUID", () => {
    for (const id of [
      undefined,
      "",
      "A".repeat(129),
      "has space",
      "new\nline",
      "é",
      "x".repeat(900_000),
      "a,b",
    ])
      expect(requestIdFrom(id)).toMatch(UUID);
  });

  it("generates a different id each time", () => {
    expect(requestIdFrom(undefined)).not.toBe(requestIdFrom(undefined));
  });
});

describe("requestIds middleware", () => {
  it("echoes a sane caller id in the header and res.locals", async () => {
    const res = await get("/ok", "client-id_42");
    expect(res.status).toBe(200);
    expect(res.id).toBe("client-id_42");
    expect(JSON.parse(res.body)).toEqual({ seen: "client-id_42" });
  });

  it.each([
    ["too long", "a".repeat(129)],
    ["spaces", "a b c"],
    ["a tab", "a\tb"],
    ["a comma (two headers joined)", "a,b"],
  ])("replaces an id with %s", async (_name, id) => {
    const res = await get("/ok", id);
    expect(res.id).toMatch(UUID);
    expect(JSON.parse(res.body).seen).toBe(res.id);
  });

  it("replaces a 900 KB id", async () => {
    const res = await get("/ok", "x".repeat(900_000));
    expect(res.status).toBe(200);
    expect(res.id).toMatch(UUID);
  });

  it("never sees a newline: HTTP cannot carry one in a header value, and requestIdFrom rejects it", async () => {
    await expect(get("/ok", "line1\nline2")).rejects.toThrow();
    expect(requestIdFrom("line1\nline2")).toMatch(UUID);
  });

  it("replaces two ids sent as two headers (node joins them with a comma)", async () => {
    const headers = new Headers();
    headers.append(REQUEST_ID_HEADER, "one");
    headers.append(REQUEST_ID_HEADER, "two");
    const res = await fetch(`http://127.0.0.1:${port}/ok`, { headers });
    expect(res.headers.get(REQUEST_ID_HEADER)).toMatch(UUID);
  });

  it("generates one when missing", async () => {
    const res = await get("/ok");
    expect(res.id).toMatch(UUID);
  });

  it("is on 404 answers too", async () => {
    const missing = await get("/nowhere");
    expect(missing.status).toBe(404);
    expect(missing.id).toMatch(UUID);
    const echoed = await get("/nowhere", "trace-404");
    expect(echoed.id).toBe("trace-404");
  });
});
