/**
 * What a file that upgrade changes now does differently, where the owner must act (moved settings):
 * printed beside the file (cli/upgrade.ts). Each note names the text an older create-agent wrote and
 * what to do now that it is gone; it is said only when the project's file had that text and the
 * upgraded one has not.
 */
import { textOf } from "../write/apply.js";
import type { FileChange } from "./plan.js";

interface BehaviourNote {
  path: string;
  /** Text the older file held. */
  gone: string;
  note: string;
}

const NOTES: readonly BehaviourNote[] = [
  {
    path: "compose.yaml",
    gone: "PUBLIC_URL: ${PUBLIC_URL",
    note: "PUBLIC_URL now comes from .env.production, no longer from the shell or compose's .env: move it there (unset, each answer names the address its request came in on)",
  },
];

/** The notes for one change (none unless it writes a file that drops a noted text). */
export function behaviourNotes(change: FileChange): string[] {
  if (change.before === undefined || change.after === undefined) return [];
  const before = textOf(change.before);
  const after = textOf(change.after);
  return NOTES.filter(
    (n) => n.path === change.path && before.includes(n.gone) && !after.includes(n.gone),
  ).map((n) => n.note);
}
