/** A file the generator produces, and who owns it afterwards. */
export interface GeneratedFile {
  /** POSIX path relative to the project root. */
  path: string;
  /** Text, or bytes for binary files (the vendored CLI tarball). */
  contents: string | Uint8Array;
  /**
   * "generated": rewritten whenever its contents change (lives under src/generated/).
   * "user": written once if missing, never overwritten (handlers, runtime, server, tests, README, ...).
   */
  owner: "generated" | "user";
}

/** The folder every "generated" file lives in; anything else there that is no longer generated is removed. */
export const GENERATED_DIR = "src/generated";
