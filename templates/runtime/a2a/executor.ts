/**
 * The A2A agent executor: a task is one job of the pipeline (jobs/pipeline.ts), the same as a
 * POST /execute or an MCP tools/call, on the same ledger (one authorization = one run and at most
 * one charge, whichever transport it comes in by).
 *   first turn naming no capability (plain text): a Message saying how to call (help.ts), no task;
 *   first turn, dev mode: the job runs at once -> completed (its output as a DataPart artifact);
 *   first turn, paid: submitted -> input-required with the a2a-x402 offer (offer.ts), nothing run;
 *   second turn (same task, `x402.payment.payload`): the payload checked against that offer, then
 *     the paid pipeline (verify, reserve, run, check, settle while the caller is connected) ->
 *     completed with `x402.payment.receipts`, or failed with `x402.payment.error` (outcome.ts).
 * CancelTask stops what this instance runs of the task: its handler's ctx.signal aborts and its
 * job's caller counts as gone, so nothing is charged. Part of your project: edit freely.
 */
import { PaymentError } from "../errors.js";
import type { PaymentChannel } from "../jobs/channel.js";
import { executeJob, type JobAnswer, type JobServices } from "../jobs/pipeline.js";
import type { Logger } from "../types.js";
import { agentMessage, textPart, TurnEvents } from "./events.js";
import { offerMismatch, type PaymentRequiredObject } from "./offer.js";
import { writeOutcome, writePaymentFailed } from "./outcome.js";
import { helpMessage } from "./help.js";
import {
  jobBody,
  namesCapability,
  REQUEST_KEY,
  storedJob,
  taskJob,
  type TaskJob,
} from "./request.js";
import { currentScope } from "./scope.js";
import {
  type A2aSdk,
  type AgentExecutor,
  type EventBus,
  type RequestContext,
  TaskState,
} from "./sdk.js";
import { PAYLOAD_KEY, REQUIRED_KEY } from "./x402.js";

/** Where a second turn carries its payment. */
function messageChannel(payload: unknown): PaymentChannel {
  const name = `message.metadata["${PAYLOAD_KEY}"]`;
  return {
    sent: () => (payload === undefined ? undefined : { name, object: payload }),
    required: `payment required: send an x402 v2 PaymentPayload in ${name} on this task`,
  };
}

/** A paid job that was settled (a cancel that came too late still shows its result). */
const charged = (answer: JobAnswer): boolean =>
  answer.kind === "completed" && answer.settlement !== undefined;

/** A turn this instance is running: its task's context, and the cancel of its job's caller. */
interface Running {
  contextId: string;
  cancel: AbortController;
}

/** The turns of the tasks this instance serves. */
class TaskTurns {
  private readonly running = new Map<string, Running>();

  constructor(
    private readonly s: JobServices,
    private readonly sdk: A2aSdk,
    private readonly fallback: Logger,
  ) {}

  /** One job of the pipeline for this turn; `payload` only on a paying turn. */
  async run(
    ctx: RequestContext,
    job: TaskJob,
    payload?: unknown,
  ): Promise<{ answer: JobAnswer; cancelled: boolean }> {
    const scope = currentScope();
    const cancel = new AbortController();
    this.running.set(ctx.taskId, { contextId: ctx.contextId, cancel });
    const gone = scope ? AbortSignal.any([scope.callerGone, cancel.signal]) : cancel.signal;
    const leave = this.s.drain.enter(); // a graceful shutdown waits for the job (and its settlement)
    try {
      const answer = await executeJob(this.s, {
        body: jobBody(ctx.taskId, job),
        payment: messageChannel(payload),
        resourceUrl: () => job.resourceUrl,
        logger: (scope?.logger ?? this.fallback).child({ task_id: ctx.taskId }),
        callerGone: gone,
        cancel: cancel.signal,
      });
      return { answer, cancelled: cancel.signal.aborted };
    } finally {
      this.running.delete(ctx.taskId);
      leave();
    }
  }

  async first(ctx: RequestContext, bus: EventBus): Promise<void> {
    const resourceUrl = currentScope()?.resourceUrl() ?? "";
    const job = taskJob(ctx.userMessage, this.s.config.a2a.deadlineSeconds, resourceUrl);
    const events = new TurnEvents(this.sdk, bus, { id: ctx.taskId, contextId: ctx.contextId });
    events.submitted(ctx.userMessage, { [REQUEST_KEY]: job });
    // Paid: no payment on this turn, so the pipeline answers with what to pay (nothing runs).
    const { answer, cancelled } = await this.run(ctx, job);
    if (!cancelled || charged(answer)) writeOutcome(events, answer, job, this.s.gate);
  }

  async paying(ctx: RequestContext, bus: EventBus): Promise<void> {
    const task = ctx.task!;
    const events = new TurnEvents(this.sdk, bus, task);
    const job = storedJob(task.metadata);
    const offer = task.status?.message?.metadata?.[REQUIRED_KEY] as
      PaymentRequiredObject | undefined;
    const payload = ctx.userMessage.metadata?.[PAYLOAD_KEY];
    const mismatch = offerMismatch(payload, offer);
    if (!job || mismatch) {
      events.taskNow(task);
      const noJob = { code: "INVALID_AMOUNT", message: "this task holds no job to pay for" };
      return writePaymentFailed(events, mismatch ?? noJob);
    }
    const { answer, cancelled } = await this.run(ctx, job, payload);
    // Cancelled: CancelTask answered for the task (a job charged just before it still says so).
    if (cancelled && !charged(answer)) return;
    if (answer.kind === "refused" && answer.error instanceof PaymentError) {
      if (answer.error.code === "in_use") {
        // Another request is paying this task with this payment now: its outcome is the task's.
        const said = agentMessage(task, [textPart(answer.error.message)]);
        return bus.publish(this.sdk.AgentEvent.message(said));
      }
    }
    events.taskNow(task);
    writeOutcome(events, answer, job, this.s.gate, offer);
  }

  /** CancelTask: the handler's ctx.signal aborts and its caller counts as gone (nothing charged); the task says canceled. */
  async cancel(taskId: string, bus: EventBus): Promise<void> {
    const turn = this.running.get(taskId);
    if (!turn) return;
    turn.cancel.abort();
    const events = new TurnEvents(this.sdk, bus, { id: taskId, contextId: turn.contextId });
    events.status(TaskState.canceled, [
      textPart("cancelled: the job's result will not be delivered, and nothing is charged"),
    ]);
  }
}

export function createExecutor(s: JobServices, sdk: A2aSdk, fallback: Logger): AgentExecutor {
  const turns = new TaskTurns(s, sdk, fallback);
  return {
    execute: async (ctx, bus) => {
      if (ctx.task) return turns.paying(ctx, bus);
      if (namesCapability(ctx.userMessage)) return turns.first(ctx, bus);
      // Plain text: how to call this agent (help.ts); no task, nothing run or charged.
      const context = { id: ctx.taskId, contextId: ctx.contextId };
      bus.publish(sdk.AgentEvent.message(helpMessage(s.agent, s.gate !== undefined, context)));
    },
    cancelTask: (taskId, bus) => turns.cancel(taskId, bus),
  };
}
