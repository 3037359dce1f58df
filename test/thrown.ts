// What a call threw, checked to be of the expected class: for tests that read a typed error's fields
// (a ConfigError's or a ManifestError's problems). Anything else thrown, or nothing, fails the test.

type ErrorClass<E> = abstract new (...args: never[]) => E;

/** The error `run` throws, which must be a `kind`. */
export function thrownBy<E>(kind: ErrorClass<E>, run: () => unknown): E {
  let error: unknown;
  try {
    run();
  } catch (e) {
    error = e;
  }
  return checked(kind, error);
}

/** The error `promise` rejects with, which must be a `kind`. */
export async function rejectionOf<E>(kind: ErrorClass<E>, promise: Promise<unknown>): Promise<E> {
  return checked(
    kind,
    await promise.then(
      () => undefined,
      (e: unknown) => e,
    ),
  );
}

function checked<E>(kind: ErrorClass<E>, error: unknown): E {
  if (error instanceof kind) return error;
  throw new Error(
    `expected a ${kind.name}, got ${error === undefined ? "nothing" : String(error)}`,
  );
}
