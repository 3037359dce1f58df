/** A problem the user can fix, reported as one clear message and exit code 1 (no stack trace). */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliError";
  }
}
