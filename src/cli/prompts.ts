import { createInterface } from "node:readline/promises";

/** The user stopped at a question (Ctrl-C, Ctrl-D, or "n" to the confirmation). Nothing has been written. */
export class CancelledError extends Error {
  constructor() {
    super("cancelled");
    this.name = "CancelledError";
  }
}

export interface Question {
  message: string;
  default: string;
  /** Returns an error message for a bad answer; the question is asked again. */
  validate?: (answer: string) => string | undefined | Promise<string | undefined>;
}

/** Questions on the terminal. Only used when stdin and stdout are TTYs and not --yes. */
export interface Prompter {
  /** Asks until the answer (or the default, for an empty answer) passes `validate`; resolves to it, trimmed. */
  ask(question: Question): Promise<string>;
  /** A yes/no question, yes by default. */
  confirm(message: string): Promise<boolean>;
  /** Shows text between questions. */
  say(text: string): void;
  close(): void;
}

/**
 * Opens the terminal for questions. Ctrl-C or Ctrl-D at a question rejects it with CancelledError (readline
 * closes itself on both), instead of readline's AbortError.
 */
export function openPrompter(
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stdout,
): Prompter {
  const rl = createInterface({ input, output });
  let closed = false;
  rl.on("close", () => {
    closed = true;
  });

  const question = async (text: string): Promise<string> => {
    if (closed) throw new CancelledError();
    try {
      return await rl.question(text);
    } catch (error) {
      if (!closed && (error as Error | undefined)?.name !== "AbortError") throw error;
      output.write("\n"); // the cursor is still on the question's line
      throw new CancelledError();
    }
  };

  return {
    async ask(q) {
      for (;;) {
        const answer = (await question(`${q.message} (${q.default}): `)).trim() || q.default;
        const problem = await q.validate?.(answer);
        if (!problem) return answer;
        output.write(`  ${problem}\n`);
      }
    },
    async confirm(message) {
      for (;;) {
        const answer = (await question(`${message} (Y/n) `)).trim().toLowerCase();
        if (answer === "" || answer === "y" || answer === "yes") return true;
        if (answer === "n" || answer === "no") return false;
        output.write(`  please answer y (yes) or n (no)\n`);
      }
    },
    say(text) {
      output.write(text);
    },
    close() {
      rl.close();
    },
  };
}
