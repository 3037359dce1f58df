// What A2A tests share (test/runtime/a2a.test.ts, a2a-rest.test.ts, test/chain/a2a.test.ts): a 1.0 user
// message with a DataPart in the SDK's TypeScript shape, a raw JSON-RPC call to POST /a2a (no A2A-Version:
// 0.3), and a dev-mode echo job run through an SDK client of either binding.
import { randomUUID } from "node:crypto";
import { expect } from "vitest";

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

/** message/send's params for a 0.3 user message with a DataPart (on task `taskId`, when given). */
export const message03 = (
  data: unknown,
  metadata: Record<string, unknown> = {},
  taskId?: string,
) => ({
  message: {
    kind: "message",
    messageId: randomUUID(),
    role: "user",
    parts: [{ kind: "data", data }],
    metadata,
    ...(taskId && { taskId }),
  },
});

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

/** The part of the SDK's client (JSON-RPC or HTTP+JSON transport) that a dev-mode job uses. */
export interface SdkClient {
  sendMessage(params: any): Promise<unknown>;
  getTask(params: any): Promise<unknown>;
}

/**
 * Runs echo (`text` `times` times) through `client` against a dev-mode app serving `agent`: the task
 * completes with the output as a DataPart artifact, the handler ran once, and GetTask reads the task back
 * completed with that artifact. Returns the task.
 */
export async function expectDevEcho(
  client: SdkClient,
  agent: { calls: Record<string, number> },
  text: string,
  times: number,
): Promise<any> {
  const before = agent.calls.echo ?? 0;
  const result: any = await client.sendMessage({
    message: dataMessage({ capability: "echo", input: { text, times } }),
  });
  expect(result.status.state).toBe(3); // TASK_STATE_COMPLETED
  const output = { text: text.repeat(times) };
  expect(result.artifacts[0].parts[0].content).toEqual({ $case: "data", value: output });
  expect(agent.calls.echo).toBe(before + 1);
  const got: any = await client.getTask({ id: result.id });
  expect(got.status.state).toBe(3);
  expect(got.artifacts[0].parts[0].content.value).toEqual(output);
  return result;
}
