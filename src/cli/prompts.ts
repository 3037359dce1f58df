import { createInterface } from "node:readline/promises";

export interface Question {
  message: string;
  default: string;
  /** Returns an error message for a bad answer; the question is asked again. */
  validate?: (answer: string) => string | undefined;
}

/** Asks each question on the terminal, offering its default. Only called when stdin is a TTY and not --yes. */
export async function ask(questions: Question[]): Promise<string[]> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answers: string[] = [];
    for (const q of questions) {
      for (;;) {
        const answer = (await rl.question(`${q.message} (${q.default}): `)).trim() || q.default;
        const problem = q.validate?.(answer);
        if (!problem) {
          answers.push(answer);
          break;
        }
        process.stdout.write(`  ${problem}\n`);
      }
    }
    return answers;
  } finally {
    rl.close();
  }
}
