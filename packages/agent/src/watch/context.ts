import type { PushEvent } from "@doorbell/intents";
import type { Clock } from "../clock.js";
import type { AgentError } from "../errors.js";
import type { HolderClient } from "../holder/client.js";
import type { Match } from "../holder/results.js";
import type { StateBox } from "../state/box.js";
import type { DoorbellRang, IntentHandle, ReadDone, SubscriptionReport } from "./report.js";

/** What the app is told. Each may be async; matches are handed over at least once (see decisions.md). */
export interface AgentHooks {
  /** New matches, oldest first; the cursor moves on only after this resolves. */
  onMatches?: (intent: IntentHandle, matches: Match[]) => void | Promise<void>;
  /** The intent's status as the holder reports it (doorbell or read). */
  onStatus?: (intent: IntentHandle, status: string) => void | Promise<void>;
  onSubscription?: (intent: IntentHandle, report: SubscriptionReport) => void | Promise<void>;
  /** A doorbell rang (its signature verified): which, when, and when the next read is due. */
  onDoorbell?: (intent: IntentHandle, rang: DoorbellRang) => void | Promise<void>;
  /** A read of the matches was done: when, how many were new, and when the next is due. */
  onRead?: (intent: IntentHandle, read: ReadDone) => void | Promise<void>;
  /** A call that failed and will be tried again later; the message carries no code or secret. */
  onError?: (intent: IntentHandle, error: AgentError) => void;
}

export interface WatchContext {
  client: HolderClient;
  box: StateBox;
  clock: Clock;
  hooks: AgentHooks;
  events: readonly PushEvent[] | undefined;
  timing: AgentTiming;
}

export interface AgentTiming {
  /** A replaced secret still verifies doorbells this long (retries of rule 5 last ≤ 24 h). */
  oldSecretGraceMs: number;
  /** A failed subscribe or renewal is tried again after this. */
  retryMs: number;
  /** After subscription.ended with delivery-failed or lease-expired, subscribe again after this. */
  resubscribeAfterMs: number;
  /** While doorbells work, read anyway this often to notice a missed one. */
  safetyReadMs: number;
  /** A match delivered longer ago than this that no doorbell announced is a gap (rule 6 coalesces 15 min). */
  gapGraceMs: number;
}
