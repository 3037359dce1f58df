// The text after `create-agent call --help`, in a module of its own: commands.ts needs it to declare the
// command, and must not load the caller (and what it imports) to do so.
import { PAYER_KEY_VARIABLE } from "../caller/payment.js";
import { SOLANA_MAX_DEADLINE_SECONDS } from "../caller/guard-svm.js";

/** Shown after the options in `create-agent call --help`. */
export const CALL_HELP_AFTER = `
Without a url, the service is AGENT_URL, else http://localhost:<PORT> with PORT from the
environment, else from a PORT= line in ./.env, else 3000. Any of the service's URLs works
(base, /about, /execute, /mcp).

Payment: a service that asks for payment (HTTP 402) is paid in USDC with the official x402 client
(@x402/fetch, x402 v2 or v1), never more than the price its /about declares nor more than
--max-price; without --max-price, never more than 1 USDC (the x402 client's default cap). An EVM
authorization is valid for at most the job's deadline plus an hour, whatever window the service
offers. Keys are read from the environment only: ${PAYER_KEY_VARIABLE} pays on EVM networks
(0x + 64 hex digits), SOLANA_PAYER_KEY on Solana (base58, or solana-keygen's JSON byte array;
loads @x402/svm and @solana/kit, and names the command that installs them when missing). The
network is --network, else the first one the service offers that you hold a key for. Solana reads
its RPC from X402_RPC_URL_<NET> (e.g. X402_RPC_URL_SOLANA_DEVNET), else the network's public
endpoint. A Solana payment lives about 60 s: a job paid on Solana must be due within
${SOLANA_MAX_DEADLINE_SECONDS} s (its default when Solana is chosen up front; a longer --deadline-seconds is
refused before anything is signed). A dropped connection re-sends the identical request (same
job_id, same signed payment): the job is paid once. Services in dev mode are called without payment.

Async jobs: --async sends Prefer: respond-async. A service with async jobs checks the job and its
payment, then answers 202 with a Location; call prints that the job is queued (its job_token only if you
stop waiting: Ctrl-C prints the curl command that fetches the answer, since the job is charged once it
completes) and polls it with the token (1 s, growing 1.5x to 15 s, never sooner than the service's Retry-After)
until the job finishes, at most until its deadline plus a minute, then prints the result and receipt
as usual: the payment is settled only when the job completed. A lost 202 re-sends the identical
request (same signed payment): the service names the same job. A service that answers at once is
answered as usual. A Solana payment cannot wait for a queued job: --async on Solana is refused
before anything is signed.

MCP: --mcp (or a URL ending in /mcp) sends the same job as an MCP tools/call to the service's /mcp
(Streamable HTTP, with the official MCP client, @modelcontextprotocol/sdk: a devDependency of
create-agent, loaded only with --mcp; when it is missing, call names the command that installs it,
nothing sent). A paid tool is paid as over HTTP, by the x402 v2 MCP transport: the PaymentPayload in
_meta["x402/payment"], the receipt read from _meta["x402/payment-response"]; the same checks before
anything is signed, the same resend of the identical call (same signed payment) after a lost answer.
A tool's error is printed as its error_type (it has no HTTP status); a JSON-RPC error names its code.
--async is refused with --mcp (a tool call has no async jobs).

Token: only the network's USDC is paid (its address from create-agent's network table: e.g.
0x036C...CF7e on base-sepolia, EPjF...Dt1v on solana). An offer in any other token (USDT, a
token the service deployed) is refused before anything is signed, naming it; --asset <address>
allows one (compared with the price in its atomic units as if it had USDC's 6 decimals), and the
receipt then names the token signed.

Output: the job's output as JSON on stdout; notes and the payment receipt on stderr. With --json
and no file, stdout is one JSON document: {"ok":true,"job_id","capability","output","completed_at",
"payment"} or {"ok":false,"status"?,"error_type","error"}. Exit code 0 on success, 1 on any failure.

Examples:
  create-agent call echo --input message=hi
  create-agent call https://agent.example.com summarize --json input.json --max-price 0.05
  create-agent call https://agent.example.com/mcp summarize --input text=hi --max-price 0.05
  create-agent call https://agent.example.com research --async --deadline-seconds 1800 --input topic=x
  SOLANA_PAYER_KEY=... create-agent call https://agent.example.com echo --network solana --input message=hi
  echo '{"text":"hi"}' | create-agent call summarize --json - --input max_words=20
  npm run call -- echo --input message=hi      (in a generated project)`;
