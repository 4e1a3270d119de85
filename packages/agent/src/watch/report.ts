/** What the app (and `doorbell agent watch`) is told about an intent's doorbells, in plain words. */
import type { LocalSubscription, WatchState } from "../state/schema.js";

export interface IntentHandle {
  /** This agent's own name for the watched intent: safe to log (the intentCode is not). */
  handle: string;
  /** The holder's id of the intent, once read. */
  intentId?: string;
}

export interface SubscriptionReport {
  status: LocalSubscription["status"] | "none";
  /** How new matches are noticed now: doorbells, or reading every 15 minutes (push profile §8). */
  mode: "doorbell" | "polling";
  subscriptionId?: string;
  approval?: string;
  expiresAt?: string;
  endedReason?: string;
  /** One line for a person. */
  note: string;
}

/** A doorbell that rang, for the app (`doorbell agent watch` says so). */
export interface DoorbellRang {
  type: string;
  /** Epoch ms it arrived. */
  at: number;
  /** `intent.status.changed`: the new status; `subscription.ended`: the reason. */
  detail?: string;
  /** Epoch ms the next read is due; Infinity when no read is due any more (a final status). */
  nextReadAt: number;
}

/** A read of the matches that was done. */
export interface ReadDone {
  at: number;
  newMatches: number;
  /** Epoch ms the next read is due; Infinity when none is (the intent ended). */
  nextReadAt: number;
}

/** When the next read is due, for a person: "now", "at 14:05:00Z (in 15 min)", or "none". */
export function nextReadWords(nextReadAt: number, now: number): string {
  if (!Number.isFinite(nextReadAt)) return "no more reads";
  if (nextReadAt <= now + 1_000) return "next read now";
  const minutes = Math.round((nextReadAt - now) / 60_000);
  const inWords =
    minutes < 1
      ? `${Math.max(1, Math.round((nextReadAt - now) / 1000))} s`
      : minutes < 120
        ? `${minutes} min`
        : `${Math.round(minutes / 60)} h`;
  return `next read due ${new Date(nextReadAt).toISOString().replace(/\.\d{3}Z$/, "Z")} (in ${inWords})`;
}

/** One line for a doorbell that rang. */
export function doorbellWords(rang: DoorbellRang, now: number): string {
  const what =
    rang.type === "intent.matches.delivered"
      ? "new matches announced"
      : rang.type === "intent.status.changed"
        ? `the intent's status changed${rang.detail === undefined ? "" : ` to ${rang.detail}`}`
        : rang.type === "subscription.ended"
          ? `the holder ended the doorbells${rang.detail === undefined ? "" : ` (${rang.detail})`}`
          : rang.type;
  return `doorbell rang at ${new Date(rang.at).toISOString().replace(/\.\d{3}Z$/, "Z")}: ${what}; ${nextReadWords(rang.nextReadAt, now)}`;
}

export const handleOf = (watch: WatchState): IntentHandle =>
  watch.intentId === undefined
    ? { handle: watch.handle }
    : { handle: watch.handle, intentId: watch.intentId };

/** Doorbells are trusted only while the subscription is active and no gap has been noticed since the last one. */
export const usesDoorbells = (watch: WatchState): boolean =>
  watch.subscription?.status === "active" && watch.gapAt === undefined;

const POLLING = "reading matches every 15 minutes meanwhile";

export function reportOf(watch: WatchState, why?: string): SubscriptionReport {
  const sub = watch.subscription;
  const mode = usesDoorbells(watch) ? "doorbell" : "polling";
  if (sub === undefined) {
    return {
      status: "none",
      mode,
      note: `no doorbells${why === undefined ? "" : `: ${why}`}; reading matches every 15 minutes`,
    };
  }
  const base = {
    status: sub.status,
    mode,
    ...(sub.subscriptionId === undefined ? {} : { subscriptionId: sub.subscriptionId }),
    ...(sub.approval === undefined ? {} : { approval: sub.approval }),
    ...(sub.expiresAt === undefined ? {} : { expiresAt: sub.expiresAt }),
    ...(sub.endedReason === undefined ? {} : { endedReason: sub.endedReason }),
  } as const;
  return { ...base, note: why ?? noteOf(watch, sub) };
}

function noteOf(watch: WatchState, sub: LocalSubscription): string {
  switch (sub.status) {
    case "subscribing":
      return `asking the holder for doorbells; ${POLLING}`;
    case "awaiting_verification":
      return `waiting for the holder to verify this endpoint (its challenge); ${POLLING}`;
    case "awaiting_person_approval":
      if (sub.approval === "sent-to-verified-channel")
        return `waiting for the person to approve notifications: the holder e-mailed them a link; ${POLLING}`;
      if (sub.approval === "on-consent-page")
        return `waiting for the person to approve notifications on the holder's consent page (a separate choice when they confirm the intent); ${POLLING}`;
      return `waiting for the person to approve notifications on the holder's page; ${POLLING}`;
    case "active":
      if (watch.gapAt !== undefined)
        return "a doorbell was missed (a read found matches none announced): reading matches every 15 minutes until the next doorbell";
      return `doorbells active${sub.expiresAt === undefined ? "" : ` until ${sub.expiresAt}`} (renewed before ${sub.refreshBefore ?? "the lease ends"})`;
    case "ended":
      return `doorbells ended (${sub.endedReason ?? "no reason given"}); reading matches every 15 minutes instead`;
  }
}
