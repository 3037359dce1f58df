// The text after `create-agent call --help`, in a module of its own: main.ts needs it to declare the
// command, and must not load the caller (and what it imports) to do so.
import { PAYER_KEY_VARIABLE } from "../caller/payment.js";

/** Shown after the options in `create-agent call --help`. */
export const CALL_HELP_AFTER = `
Without a url, the service is AGENT_URL, else http://localhost:<PORT> with PORT from the
environment, else from a PORT= line in ./.env, else 3000. Any of the service's URLs works
(base, /about, /execute).

Payment: a service that asks for payment (HTTP 402) is paid in USDC with the official x402 client
(@x402/fetch, x402 v2 or v1), never more than the price its /about declares nor more than
--max-price. The payer's private key is read from the environment variable ${PAYER_KEY_VARIABLE} only
(0x + 64 hex digits). A dropped connection re-sends the identical request (same job_id, same signed
authorization): the job is paid once. Services in dev mode are called without payment.

Output: the job's output as JSON on stdout; notes and the payment receipt on stderr. With --json
and no file, stdout is one JSON document: {"ok":true,"job_id","capability","output","completed_at",
"payment"} or {"ok":false,"status"?,"error_type","error"}. Exit code 0 on success, 1 on any failure.

Examples:
  create-agent call echo --input message=hi
  create-agent call https://agent.example.com summarize --json input.json --max-price 0.05
  echo '{"text":"hi"}' | create-agent call summarize --json - --input max_words=20
  npm run call -- echo --input message=hi      (in a generated project)`;
