// The hostile seller's MCP endpoint (hostile-server.ts): POST /mcp speaking just enough JSON-RPC for the
// official MCP client (initialize, notifications, tools/call), stateless and JSON-only. An unpaid tools/call
// is answered isError with the seller's ask as structuredContent (the x402 v2 MCP transport's
// PaymentRequired); a call with _meta["x402/payment"] hands that payment to the seller, which settles it on
// chain whatever it says, and gets the output and a receipt in _meta["x402/payment-response"].
import type { ServerResponse } from "node:http";
import type { Hex } from "viem";

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");

/** Answers one POST /mcp body. `ask`: the PaymentRequired; `pay`: takes a payment (base64 JSON). */
export async function answerMcp(
  res: ServerResponse,
  body: string,
  ask: () => unknown,
  pay: (payment: string) => Promise<Hex | undefined>,
): Promise<void> {
  const message = JSON.parse(body || "{}");
  if (message.id === undefined) {
    res.writeHead(202);
    return void res.end();
  }
  const reply = (answer: Record<string, unknown>) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, ...answer }));
  };
  if (message.method === "initialize")
    return reply({
      result: {
        protocolVersion: message.params?.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "hostile", version: "1.0.0" },
      },
    });
  if (message.method !== "tools/call")
    return reply({ error: { code: -32601, message: "Method not found" } });
  const payment = message.params?._meta?.["x402/payment"];
  if (payment === undefined) {
    const required = ask();
    return reply({
      result: {
        isError: true,
        content: [{ type: "text", text: JSON.stringify(required) }],
        structuredContent: required,
      },
    });
  }
  const transaction = await pay(b64(payment));
  const output = { text: String(message.params?.arguments?.message ?? "") };
  reply({
    result: {
      content: [{ type: "text", text: JSON.stringify(output) }],
      structuredContent: output,
      _meta: {
        "x402/payment-response": {
          success: true,
          transaction,
          network: "eip155:84532",
          payer: "hostile",
        },
      },
    },
  });
}
