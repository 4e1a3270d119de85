import type { Message } from "../message/types.js";
import type { AgreementRecord } from "../record/types.js";
import type { ThreadState } from "./store.js";

/**
 * How an agent inbox's messages leave on one channel. The inbox signs, stores and sets the thread's
 * state; the outlet only carries: e-mail composes, DKIM-signs and sends a mail
 * (`emailOutlet`), A2A sends a Message or sets the status of the thread's task (`attachA2A`).
 */

/** One signed message of ours, stored and ready to leave. */
export interface Outgoing {
  readonly message: Message;
  readonly jws: string;
  readonly hash: string;
  /** The record this side sealed, on the accept that closes the thread. */
  readonly record?: AgreementRecord;
}

export interface Outlet {
  /** Carries `outgoing`; `state` is the thread's state once it has left. */
  deliver(outgoing: Outgoing, state: ThreadState): Promise<void>;
  /**
   * The thread reached `state` without a message of ours leaving (an offer received, an answer
   * waiting for the owner, an accept received). A channel whose status the other side reads
   * (A2A) shows it; e-mail has nothing to say.
   */
  stateChanged?(thread: string, state: ThreadState): Promise<void>;
}
