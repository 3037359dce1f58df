import { type FSWatcher, watch } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ManifestError } from "../manifest/index.js";
import { onStopSignals } from "../stop-signals.js";
import { CliError } from "./errors.js";
import { describeReport, regenerate } from "./generate.js";

export interface WatchOptions {
  /** Quiet time after the last event before regenerating, so one save gives one run. Default 100 ms. */
  debounceMs?: number;
  /** Stops watching when aborted, like Ctrl-C (for tests and embedding). */
  signal?: AbortSignal;
}

const MANIFEST = "agent.json";

/** What the last look at agent.json found; decides which headline a run prints. */
type State = "initial" | "ok" | "invalid" | "missing";

/**
 * `create-agent generate --watch`: regenerate on every save of agent.json until Ctrl-C.
 * Resolves to the exit code once stopped (0, or 1 if the file watcher itself failed).
 */
export async function watchManifest(root: string, options: WatchOptions = {}): Promise<number> {
  const debounceMs = options.debounceMs ?? 100;
  const manifestPath = join(root, MANIFEST);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const err = (line: string) => process.stderr.write(`${line}\n`);

  let state: State = "initial";
  // The agent.json text the last run worked from (good or bad), to skip events that change nothing:
  // mtime-only touches, the duplicate events editors and fs.watch produce. Undefined forces the next run.
  let lastText: string | undefined;

  /** One look at agent.json and, if its text changed, one regeneration. Never throws. */
  async function runOnce(): Promise<void> {
    let text: string;
    try {
      text = await readFile(manifestPath, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return onMissing();
      err(`create-agent: cannot read ${MANIFEST}: ${(error as Error).message}`);
      lastText = undefined;
      return;
    }
    if (text === lastText) return;
    lastText = text;
    const before = state;
    try {
      // regenerate() reads the file again; if a save lands in between, its own event triggers another run.
      const { report, warnings } = await regenerate(root);
      state = "ok";
      for (const warning of warnings) err(`warning: ${warning}`);
      const lines = describeReport(report);
      if (before === "initial") {
        out(lines.length ? lines.join("\n") : "Generated code is up to date with agent.json.");
        return;
      }
      const headline =
        before === "invalid"
          ? `${MANIFEST} is valid again`
          : before === "missing"
            ? `${MANIFEST} is back`
            : `${MANIFEST} changed`;
      out(
        lines.length
          ? `${headline}; regenerated:\n${lines.join("\n")}`
          : `${headline}; no changes to generated code.`,
      );
    } catch (error) {
      if (error instanceof ManifestError) {
        // The file can vanish between our read and regenerate's; report that as a deletion, not a problem.
        if ((await readFile(manifestPath, "utf8").catch(() => undefined)) === undefined)
          return onMissing();
        state = "invalid";
        err(`${MANIFEST} has problems; keeping the last good output:\n${error.message}`);
        return;
      }
      // Unexpected (a generator bug, a disk error): report it and retry on the next event, even an identical save.
      lastText = undefined;
      err(
        `create-agent: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    }
  }

  function onMissing(): void {
    if (state !== "missing")
      err(`${MANIFEST} was deleted; keeping the generated files and waiting for it to come back.`);
    state = "missing";
    lastText = undefined;
  }

  // Serialised runs: at most one at a time; a change during a run asks for exactly one more afterwards,
  // which reads the newest contents.
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  function kick(): Promise<void> {
    timer = undefined;
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await runOnce();
      } while (again && !stopped);
    })().finally(() => {
      running = undefined;
    });
    return running;
  }

  function schedule(): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(kick, debounceMs);
  }

  let watcher: FSWatcher;
  try {
    // Watch the folder, not the file: a save that renames a temp file over agent.json replaces the inode,
    // and a watch on the old inode would go silent. Non-recursive, so our own writes under src/ are not seen.
    watcher = watch(root, { persistent: true }, (_event, filename) => {
      // Some platforms give no filename; treat that as "maybe agent.json" (the text comparison filters it).
      if (filename === null || filename === MANIFEST) schedule();
    });
  } catch (error) {
    throw new CliError(`cannot watch ${root}: ${(error as Error).message}`);
  }

  return new Promise<number>((resolvePromise) => {
    const onAbort = () => stop(0);
    const offSignals = onStopSignals(() => stop(0));

    function stop(code: number): void {
      if (stopped) return;
      stopped = true;
      watcher.close();
      clearTimeout(timer);
      // Removing our listeners restores Node's default, so a second Ctrl-C while we wait still kills the process.
      offSignals();
      options.signal?.removeEventListener("abort", onAbort);
      // Let an in-flight regeneration finish so no file is left half-applied.
      void (running ?? Promise.resolve()).then(() => {
        out("Stopped watching.");
        resolvePromise(code);
      });
    }

    watcher.on("error", (error) => {
      err(`create-agent: the file watcher failed: ${error.message}`);
      stop(1);
    });
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) return stop(0);

    // First run straight away, through the same queue, so a save during it is not lost.
    void kick().then(() => {
      if (!stopped) out(`Watching ${MANIFEST} for changes (Ctrl-C to stop)`);
    });
  });
}
