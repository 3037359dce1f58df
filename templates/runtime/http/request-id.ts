/**
 * A request id on every answer: the caller's X-Request-Id when it is sane, otherwise a new UUID.
 * Put it in your log lines and tell callers to quote it when they report a problem.
 * Part of your project: edit freely.
 */
import { randomUUID } from "node:crypto";
import type { RequestHandler, Response } from "express";

export const REQUEST_ID_HEADER = "X-Request-Id";

/** 1–128 characters that are safe to echo in a header and a log line. */
const SANE_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The caller's id when sane (1–128 chars of `[A-Za-z0-9._:@/+=-]`), else a new random UUID. */
export function requestIdFrom(header: string | undefined): string {
  if (typeof header === "string" && header.length <= 128 && SANE_ID.test(header)) return header;
  return randomUUID();
}

/**
 * Middleware (mount it first): sets `res.locals.requestId` and the X-Request-Id response header,
 * so every answer carries it, 404s and errors included.
 */
export function requestIds(): RequestHandler {
  return (req, res, next) => {
    const id = requestIdFrom(req.headers["x-request-id"] as string | undefined);
    res.locals.requestId = id;
    res.setHeader(REQUEST_ID_HEADER, id);
    next();
  };
}

/** The id requestIds() gave this answer, if it ran. */
export function requestIdOf(res: Response): string | undefined {
  const id: unknown = res.locals.requestId;
  return typeof id === "string" ? id : undefined;
}
