/**
 * Why a call failed. `errorType` is the spec's error_type when the service answered with an error body
 * (validation, payment, deadline, capability, internal), else one of the caller's own:
 *   usage      a flag, argument or input value is wrong (nothing was sent)
 *   validation the input does not match the capability's input schema (checked locally, nothing sent)
 *   capability the service has no such capability
 *   price      the price is above what the caller allows (nothing was signed)
 *   payment    paying is not possible (no payer key, no x402 client, the client refused)
 *   network    the service could not be reached, or the connection kept failing
 *   service    the service answered something that is not the spec's shape
 */
export class CallError extends Error {
  override name = "CallError";
  /** The HTTP status, when the service answered. */
  readonly status: number | undefined;
  /** The problem alone, without the "HTTP <status> <error_type>:" prefix the message has. */
  readonly error: string;
  /** One line per problem (local input validation), printed under the message. */
  readonly problems: readonly string[];

  constructor(
    readonly errorType: string,
    message: string,
    options: { status?: number; error?: string; problems?: readonly string[] } = {},
  ) {
    super(message);
    this.status = options.status;
    this.error = options.error ?? message;
    this.problems = options.problems ?? [];
  }
}
