/**
 * Handlers whose modules are imported when first needed, so a service with a hundred capabilities
 * starts as fast as one with a single capability:
 *
 *   handler: lazyHandler(() => import("../capabilities/summarize.js")),
 *
 * Dev mode imports a capability's module on its first job (an import error is that job's 500, with
 * the stack in the log). Production imports every module before it listens (startServer awaits
 * loadHandlers), so a module that cannot load stops the start, as a static import would.
 * Type-checking is the same as with a static import: the module's default export must be a Handler.
 * Part of your project: edit freely.
 */
import type { Capability, Handler, HandlerContext } from "./types.js";

/** A handler that imports its module on first use; `load()` imports it now. */
export interface LazyHandler<I, O> extends Handler<I, O> {
  load(): Promise<Handler<I, O>>;
}

export function lazyHandler<I, O>(
  importModule: () => Promise<{ default: Handler<I, O> }>,
): LazyHandler<I, O> {
  let loading: Promise<Handler<I, O>> | undefined;
  const load = (): Promise<Handler<I, O>> =>
    (loading ??= importModule().then((module) => {
      if (typeof module.default !== "function")
        throw new TypeError("the capability's module has no default export function");
      return module.default;
    }));
  const handler = async (input: I, ctx: HandlerContext): Promise<O> => (await load())(input, ctx);
  return Object.assign(handler, { load });
}

/** Imports every lazy handler's module now (in parallel); rejects with the first that fails. */
export async function loadHandlers(capabilities: Record<string, Capability>): Promise<void> {
  await Promise.all(
    Object.values(capabilities).map((c) =>
      (c.handler as Partial<LazyHandler<unknown, unknown>>).load?.(),
    ),
  );
}
