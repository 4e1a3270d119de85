import { TaskState } from "@a2a-js/sdk";
import { CodedError } from "@doorbell/errors";
import type { PushBindingReason, PushCardFacts, PushMode } from "./push-binding.js";

/**
 * The client side of the push binding rule's operational effect: every non-terminal task is read
 * with `tasks/get` once per interval (shorter than the task's SLA), whatever its push mode, so a
 * lost webhook degrades to polling instead of orphaning the task. A state change that push never
 * announced is a binding failure, logged with the agent card version, and sets the task's
 * `push_unverified` flag. A task that stays `working` longer than the stuck threshold raises one
 * alert per state.
 */

export const TERMINAL_TASK_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

export type PushDivergenceKind =
  /** The binding was refused at negotiation (ack missing or different). */
  | "binding_refused"
  /** Polling saw a transition push never delivered. */
  | "binding_failure"
  /** A push for a bound task failed authentication at the receiver. */
  | "push_auth_failed";

export interface PushDivergence {
  readonly kind: PushDivergenceKind;
  readonly taskId: string;
  readonly agent: string;
  readonly cardVersion: string;
  readonly reasons: readonly (PushBindingReason | string)[];
  /** Epoch milliseconds. */
  readonly at: number;
}

export interface StuckTaskAlert {
  readonly taskId: string;
  readonly agent: string;
  readonly cardVersion: string;
  readonly state: TaskState;
  readonly ageMs: number;
}

const agentKey = (card: PushCardFacts): string => `${card.name}\u0000${card.version}`;

export interface TrackedTask {
  readonly taskId: string;
  readonly card: PushCardFacts;
  mode: PushMode;
  pushUnverified: boolean;
  state: TaskState;
  /** When `state` was first seen, epoch ms. */
  since: number;
  /** States announced by an authenticated push, not yet confirmed by polling. */
  readonly pushed: Set<TaskState>;
  /** Push is bound but not yet confirmed by an authenticated delivery: polled until then. */
  awaitingConfirmation: boolean;
  alerted: boolean;
}

export interface Timers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export interface TaskReconcilerOptions {
  /** `tasks/get` against the remote; returns the task's current state. */
  getTask(taskId: string): Promise<{ state: TaskState }>;
  /** How often every non-terminal task is read. Must be shorter than each task's SLA. */
  intervalMs: number;
  /** The default SLA of a task, ms. */
  slaMs: number;
  /** A `working`/`submitted` task unchanged for longer than this raises an alert (default `intervalMs`). */
  stuckAfterMs?: number;
  clock?: () => number;
  timers?: Timers;
  onDivergence?(divergence: PushDivergence): void;
  onStuck?(alert: StuckTaskAlert): void;
  /** Every state change, from push or polling. */
  onState?(taskId: string, state: TaskState, via: "push" | "polling"): void;
  /** A `tasks/get` that failed; the task stays tracked. */
  onError?(taskId: string, error: unknown): void;
}

export class ReconcilerConfigError extends CodedError<"ERR_RECONCILE_INTERVAL"> {
  override readonly name = "ReconcilerConfigError";
  constructor(message: string) {
    super("ERR_RECONCILE_INTERVAL", message);
  }
}

/** Divergences go to stderr as one JSON line unless the caller logs them elsewhere. */
export function logDivergenceToStderr(divergence: PushDivergence): void {
  process.stderr.write(`${JSON.stringify({ msg: "a2a push divergence", ...divergence })}\n`);
}

export class TaskReconciler {
  readonly #options: TaskReconcilerOptions;
  readonly #clock: () => number;
  readonly #timers: Timers;
  readonly #tasks = new Map<string, TrackedTask>();
  /** Agents (card name and version) seen honouring the declared scheme. */
  readonly #confirmed = new Set<string>();
  #handle: unknown;
  #running: Promise<void> | undefined;

  constructor(options: TaskReconcilerOptions) {
    if (!(options.intervalMs > 0))
      throw new ReconcilerConfigError("the reconciliation interval must be positive");
    if (options.intervalMs >= options.slaMs) {
      throw new ReconcilerConfigError(
        `the reconciliation interval (${options.intervalMs} ms) must be shorter than the task SLA (${options.slaMs} ms)`,
      );
    }
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
    this.#timers = options.timers ?? {
      setInterval: (fn, ms) => setInterval(fn, ms).unref(),
      clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
    };
  }

  /** Starts following a task. `slaMs` overrides the default SLA and must exceed the interval. */
  track(
    taskId: string,
    init: {
      card: PushCardFacts;
      mode: PushMode;
      pushUnverified?: boolean;
      state?: TaskState;
      slaMs?: number;
      refusedReasons?: readonly PushBindingReason[];
      awaitingConfirmation?: boolean;
    },
  ): TrackedTask {
    if (init.slaMs !== undefined && this.#options.intervalMs >= init.slaMs) {
      throw new ReconcilerConfigError(
        `the reconciliation interval (${this.#options.intervalMs} ms) must be shorter than the SLA of task ${taskId} (${init.slaMs} ms)`,
      );
    }
    const task: TrackedTask = {
      taskId,
      card: init.card,
      mode: init.pushUnverified ? "polling" : init.mode,
      pushUnverified: init.pushUnverified ?? false,
      state: init.state ?? TaskState.TASK_STATE_SUBMITTED,
      since: this.#clock(),
      pushed: new Set(),
      alerted: false,
      awaitingConfirmation: init.awaitingConfirmation === true && !init.pushUnverified,
    };
    this.#tasks.set(taskId, task);
    if (init.refusedReasons !== undefined && init.refusedReasons.length > 0) {
      this.#divergence(task, "binding_refused", init.refusedReasons);
    }
    return task;
  }

  get(taskId: string): Readonly<TrackedTask> | undefined {
    return this.#tasks.get(taskId);
  }

  /** Tasks still followed (non-terminal). */
  tracked(): string[] {
    return [...this.#tasks.keys()];
  }

  /** Whether an authenticated delivery from this agent (card name and version) was seen. */
  confirmed(card: PushCardFacts): boolean {
    return this.#confirmed.has(agentKey(card));
  }

  /**
   * An authenticated push announced `state`: a hint, confirmed by the next `tasks/get`. The first
   * one on a binding awaiting confirmation confirms it (the agent honours the declared scheme):
   * the task switches to push, and later bindings with the same agent count as confirmed.
   */
  notePush(taskId: string, state: TaskState): void {
    const task = this.#tasks.get(taskId);
    if (task === undefined) return;
    if (task.awaitingConfirmation && !task.pushUnverified) {
      task.awaitingConfirmation = false;
      task.mode = "push";
      this.#confirmed.add(agentKey(task.card));
    }
    task.pushed.add(state);
    this.#advance(task, state, "push");
  }

  /** A push for this task failed authentication: set `push_unverified`, poll from now on. */
  notePushAuthFailure(taskId: string, reason: string): void {
    const task = this.#tasks.get(taskId);
    if (task === undefined) return;
    this.#confirmed.delete(agentKey(task.card));
    this.#demote(task);
    this.#divergence(task, "push_auth_failed", [reason]);
  }

  /** One pass: `tasks/get` for every non-terminal task, then the stuck-task check. */
  async reconcileOnce(): Promise<void> {
    for (const task of [...this.#tasks.values()]) {
      let snapshot: { state: TaskState };
      try {
        snapshot = await this.#options.getTask(task.taskId);
      } catch (error) {
        this.#options.onError?.(task.taskId, error);
        continue;
      }
      if (snapshot.state !== task.state) {
        // An acknowledged binding (confirmed or awaiting its first delivery) that missed a transition.
        if ((task.mode === "push" || task.awaitingConfirmation) && !task.pushed.has(snapshot.state)) {
          this.#demote(task);
          this.#divergence(task, "binding_failure", [
            `tasks/get shows a transition push never delivered (state ${TaskState[snapshot.state]})`,
          ]);
        }
        this.#advance(task, snapshot.state, "polling");
      }
      if (this.#tasks.has(task.taskId)) this.#checkStuck(task);
    }
  }

  start(): void {
    if (this.#handle !== undefined) return;
    this.#handle = this.#timers.setInterval(() => {
      if (this.#running !== undefined) return;
      this.#running = this.reconcileOnce().finally(() => {
        this.#running = undefined;
      });
    }, this.#options.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.#handle !== undefined) this.#timers.clearInterval(this.#handle);
    this.#handle = undefined;
    await this.#running;
  }

  #advance(task: TrackedTask, state: TaskState, via: "push" | "polling"): void {
    if (state === task.state) return;
    task.state = state;
    task.since = this.#clock();
    task.alerted = false;
    this.#options.onState?.(task.taskId, state, via);
    if (TERMINAL_TASK_STATES.has(state)) this.#tasks.delete(task.taskId);
  }

  #demote(task: TrackedTask): void {
    task.awaitingConfirmation = false;
    task.pushUnverified = true;
    task.mode = "polling";
  }

  #checkStuck(task: TrackedTask): void {
    if (task.state !== TaskState.TASK_STATE_WORKING && task.state !== TaskState.TASK_STATE_SUBMITTED) return;
    const ageMs = this.#clock() - task.since;
    if (task.alerted || ageMs <= (this.#options.stuckAfterMs ?? this.#options.intervalMs)) return;
    task.alerted = true;
    this.#options.onStuck?.({
      taskId: task.taskId,
      agent: task.card.name,
      cardVersion: task.card.version,
      state: task.state,
      ageMs,
    });
  }

  #divergence(task: TrackedTask, kind: PushDivergenceKind, reasons: readonly string[]): void {
    const divergence: PushDivergence = {
      kind,
      taskId: task.taskId,
      agent: task.card.name,
      cardVersion: task.card.version,
      reasons,
      at: this.#clock(),
    };
    (this.#options.onDivergence ?? logDivergenceToStderr)(divergence);
  }
}
