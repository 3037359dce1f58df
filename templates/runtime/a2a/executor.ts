/**
 * The A2A agent executor: a task is one job of the pipeline (jobs/pipeline.ts), the same as a
 * POST /execute or an MCP tools/call, on the same ledger (one authorization = one run and at most
 * one charge, whichever transport it comes in by).
 *   first turn naming no capability (plain text): a Message saying how to call (help.ts), no task;
 *   first turn, dev mode: the job runs at once -> completed (its output as a DataPart artifact);
 *   first turn, paid: submitted -> input-required with the a2a-x402 offer (offer.ts), nothing run;
 *   second turn (same task, `x402.payment.payload`): the payload checked against that offer, then
 *     the paid pipeline (verify, reserve, run, check, settle while the caller is connected) ->
 *     completed with `x402.payment.receipts`, or failed with `x402.payment.error` (outcome.ts);
 *   second turn sent with return_immediately, on a service with the job queue: verified, reserved
 *     and queued -> working at once; GetTask follows the queued job (queued.ts).
 * CancelTask stops what this instance runs of the task: its handler's ctx.signal aborts and its
 * job's caller counts as gone, so nothing is charged. Part of your project: edit freely.
 */
import { type AgentError, PaymentError, UnavailableError } from "../errors.js";
import type { PaymentChannel } from "../jobs/channel.js";
import { executeJob, type JobAnswer, type JobServices } from "../jobs/pipeline.js";
import type { AsyncJobs } from "../jobs/services.js";
import type { Logger } from "../types.js";
import { agentMessage, textPart, TurnEvents } from "./events.js";
import { offerMismatch, type PaymentRequiredObject } from "./offer.js";
import { writeOutcome, writePaymentFailed } from "./outcome.js";
import { helpMessage } from "./help.js";
import { QUEUE_KEY, QUEUED_TEXT, queuedJobOf } from "./queued.js";
import {
  asksForJob,
  jobBody,
  keptJob,
  REQUEST_KEY,
  storedJob,
  takesPlainText,
  taskJob,
  type TaskJob,
} from "./request.js";
import { currentScope } from "./scope.js";
import {
  type A2aSdk,
  type AgentExecutor,
  type EventBus,
  type RequestContext,
  type Task,
  TaskState,
} from "./sdk.js";
import { PAYLOAD_KEY, REQUIRED_KEY, STATUS_KEY } from "./x402.js";

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
    const { agent, config } = this.s;
    const job = taskJob(agent, ctx.userMessage, config.a2a.deadlineSeconds, resourceUrl);
    const events = new TurnEvents(this.sdk, bus, { id: ctx.taskId, contextId: ctx.contextId });
    events.submitted(ctx.userMessage, { [REQUEST_KEY]: keptJob(job, ctx.userMessage) });
    // Dev mode runs the job on this turn: the task is working until it answers (GetTask shows it).
    if (!this.s.gate) events.status(TaskState.working, [textPart("running the job")]);
    // Paid: no payment on this turn, so the pipeline answers with what to pay (nothing runs).
    const { answer, cancelled } = await this.run(ctx, job);
    if (!cancelled || charged(answer)) writeOutcome(events, answer, job, this.s.gate);
  }

  async paying(ctx: RequestContext, bus: EventBus): Promise<void> {
    const task = ctx.task!;
    const events = new TurnEvents(this.sdk, bus, task);
    // Its job is on the queue already (its payment sent again): the task as it is, nothing run.
    if (queuedJobOf(task)) return events.taskNow(task);
    const job = storedJob(task);
    const offer = task.status?.message?.metadata?.[REQUIRED_KEY] as
      PaymentRequiredObject | undefined;
    const payload = ctx.userMessage.metadata?.[PAYLOAD_KEY];
    const mismatch = offerMismatch(payload, offer);
    if (!job || mismatch) {
      events.taskNow(task);
      const noJob = { code: "INVALID_AMOUNT", message: "this task holds no job to pay for" };
      return writePaymentFailed(events, mismatch ?? noJob);
    }
    const jobs = ctx.request.configuration?.returnImmediately ? this.s.asyncJobs : undefined;
    if (jobs) return this.queue(ctx, events, job, payload, offer, jobs);
    const { answer, cancelled } = await this.run(ctx, job, payload);
    // Cancelled: CancelTask answered for the task (a job charged just before it still says so).
    if (cancelled && !charged(answer)) return;
    if (this.inUse(task, answer, bus)) return;
    events.taskNow(task);
    const again = payAgain(answer);
    if (again) return askAgain(events, again, offer);
    writeOutcome(events, answer, job, this.s.gate, offer);
  }

  /** Another request is paying this task with this payment now: its outcome is the task's. */
  private inUse(task: Task, answer: JobAnswer, bus: EventBus): boolean {
    const error = answer.kind === "refused" ? answer.error : undefined;
    if (!(error instanceof PaymentError) || error.code !== "in_use") return false;
    bus.publish(this.sdk.AgentEvent.message(agentMessage(task, [textPart(error.message)])));
    return true;
  }

  /**
   * A paying turn sent with return_immediately: its job queued (the task `working`, at once), or
   * what it got instead. Its first event is the update the caller gets back (no Task event first).
   */
  private async queue(
    ctx: RequestContext,
    events: TurnEvents,
    job: TaskJob,
    payload: unknown,
    offer: PaymentRequiredObject | undefined,
    jobs: AsyncJobs,
  ): Promise<void> {
    const scope = currentScope();
    const leave = this.s.drain.enter();
    const got = await jobs
      .enqueue({
        body: jobBody(ctx.taskId, job),
        payment: messageChannel(payload),
        resourceUrl: () => job.resourceUrl,
        logger: (scope?.logger ?? this.fallback).child({ task_id: ctx.taskId }),
        callerGone: scope?.callerGone,
      })
      .finally(leave);
    if ("queued" in got)
      return events.status(TaskState.working, [textPart(QUEUED_TEXT)], {
        [STATUS_KEY]: "payment-verified",
        [QUEUE_KEY]: got.queued,
      });
    const again = payAgain(got);
    if (again) return askAgain(events, again, offer);
    if (this.inUse(ctx.task!, got, events.bus)) return;
    writeOutcome(events, got, job, this.s.gate, offer);
  }

  runsHere(taskId: string): boolean {
    return this.running.has(taskId);
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

/** The executor, and whether this instance is running a turn of task `taskId` now. */
export function createExecutor(
  s: JobServices,
  sdk: A2aSdk,
  fallback: Logger,
): AgentExecutor & { runsHere(taskId: string): boolean } {
  const turns = new TaskTurns(s, sdk, fallback);
  return {
    runsHere: (taskId) => turns.runsHere(taskId),
    execute: async (ctx, bus) => {
      if (ctx.task) return turns.paying(ctx, bus);
      // The extension as endpoint.ts activated it (the SDK keeps no requested one: sdk.ts).
      const plain = takesPlainText(s.gate !== undefined, ctx.context.activatedExtensions);
      if (asksForJob(s.agent, ctx.userMessage, plain)) return turns.first(ctx, bus);
      // No job asked for: how to call this agent (help.ts); no task, nothing run or charged.
      const context = { id: ctx.taskId, contextId: ctx.contextId };
      bus.publish(sdk.AgentEvent.message(helpMessage(s.agent, s.gate !== undefined, context)));
    },
    cancelTask: (taskId, bus) => turns.cancel(taskId, bus),
  };
}

/**
 * A refusal after which the same payment may be sent again on this task (nothing reserved or run):
 * a payment that cannot wait on the queue (Solana) or no worker runs queued jobs (send it without
 * return_immediately), or the payer already runs MAX_JOBS_PER_PAYER jobs (send it again later).
 */
function payAgain(answer: JobAnswer): AgentError | undefined {
  const error = answer.kind === "refused" ? answer.error : undefined;
  if (error instanceof PaymentError && ["async_network", "payer_busy"].includes(error.code ?? ""))
    return error;
  if (error instanceof UnavailableError && error.code === "no_worker") return error;
  return undefined;
}

/** The task asks for its payment again (input-required), saying why this one did not run. */
function askAgain(events: TurnEvents, why: AgentError, offer?: PaymentRequiredObject): void {
  events.status(TaskState.inputRequired, [textPart(why.message)], {
    [STATUS_KEY]: "payment-required",
    ...(offer && { [REQUIRED_KEY]: offer }),
  });
}
