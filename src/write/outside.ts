/** A path that would land outside the project (a problem for the user to fix, not a crash). */
export class OutsideProjectError extends Error {
  override name = "OutsideProjectError";
}
