/**
 * The holder is not a mail cannon. A mail that an unauthenticated party asks for
 * (a sign-in link, a confirmation from a consent page) is sent only while three shared limits
 * allow it: per interaction (one sign-in, one consent link), per client address (IPv6 by /64) and
 * per recipient. They are checked in that order and the first refusal stops, so a flood from one
 * address spends its own budget before the victim's.
 *
 * The recipient is counted by its normalised address, stored only as a keyed hash (limits/).
 */

import type { HolderLimits, LimitHint } from "../limits/index.js";
import { normaliseEmail } from "./address.js";

export interface MailRequest {
  /** The address the mail would go to, as typed. */
  recipient: string;
  /** The limit key of the asking client (HolderLimits.clientKey), when known. */
  clientKey: string | undefined;
  /** What the mail belongs to, e.g. `signin:<uid>` or `consent:<intent id>`. */
  interaction: string;
}

export type MailVerdict = { ok: true } | { ok: false; retryAfterSeconds: number; limit: LimitHint };

/** Counts one requested mail; refuses when any of the three limits is spent. */
export async function allowRequestedMail(limits: HolderLimits, request: MailRequest): Promise<MailVerdict> {
  let recipient: string | undefined;
  try {
    recipient = normaliseEmail(request.recipient).key;
  } catch {
    recipient = undefined; // a malformed address is refused by the sender itself; nothing to count
  }
  const checks: [Parameters<HolderLimits["consume"]>[0], string | undefined][] = [
    ["mail.interaction", request.interaction],
    ["mail.client", request.clientKey],
    ["mail.recipient", recipient],
  ];
  for (const [bucket, key] of checks) {
    if (key === undefined) continue;
    const verdict = await limits.consume(bucket, key);
    if (!verdict.ok) return { ...verdict, limit: limits.hint(bucket) };
  }
  return { ok: true };
}

/** Whole minutes to wait, at least one. */
export const minutesToWait = (retryAfterSeconds: number): number =>
  Math.max(1, Math.ceil(retryAfterSeconds / 60));
