// What A2A tests share (test/runtime/a2a.test.ts, test/chain/a2a.test.ts): a 1.0 user message with a
// DataPart in the SDK's TypeScript shape, and a raw JSON-RPC call to POST /a2a (no A2A-Version: 0.3).
import { randomUUID } from "node:crypto";

/** A 1.0 user message with a DataPart (the SDK's TypeScript shape). */
export function dataMessage(value: unknown, more: Record<string, unknown> = {}): any {
  return {
    messageId: randomUUID(),
    role: 1, // ROLE_USER
    parts: [{ content: { $case: "data", value }, metadata: {}, filename: "", mediaType: "" }],
    contextId: "",
    taskId: "",
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
    ...more,
  };
}

/** A raw A2A 0.3 JSON-RPC call (no A2A-Version header: 0.3). */
export async function rpc03(
  url: string,
  method: string,
  params: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${url}/a2a`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}
