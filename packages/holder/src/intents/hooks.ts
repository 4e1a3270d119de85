/** What runs after an intent's change has committed: hooks and mails, whose failures never undo it. */
import type { HolderContext } from "../context.js";
import type { MailMessage } from "../mail/mailer.js";

/** Why an intent that had been active stopped. */
export type EndReason = "withdrawn" | "expired";

/**
 * Called after the transaction that made the change has committed. A hook's failure is logged
 * and never undoes or fails the change (the matching engine catches up on its next run).
 */
export interface IntentHooks {
  /** An intent became active (double opt-in confirmed): match it against current offers. */
  onActivated(intentId: string): void | Promise<void>;
  /** An active intent ended: stop matching and delivering for it. Not called for drafts. */
  onEnded(intentId: string, reason: EndReason): void | Promise<void>;
  /** An active intent's statement, criteria, budget, limit or buyBy changed (OAuth update). */
  onChanged?(intentId: string): void | Promise<void>;
}

export const noIntentHooks: IntentHooks = { onActivated() {}, onEnded() {} };

/** Calls a hook after commit; its failure is logged (without secrets) and swallowed. */
export async function runHook(
  ctx: HolderContext,
  name: string,
  intentId: string,
  call: () => unknown,
): Promise<void> {
  try {
    await call();
  } catch (error) {
    ctx.log.error(
      {
        event: "intent.hook_failed",
        hook: name,
        intentId,
        errorName: error instanceof Error ? error.name : typeof error,
      },
      "an intent hook failed after commit",
    );
  }
}

/** Sends a mail whose failure must not undo what already happened; logs only the kind and the intent id. */
export async function sendQuietly(
  ctx: HolderContext,
  message: MailMessage,
  kind: string,
  intentId: string,
): Promise<boolean> {
  try {
    await ctx.mailer.send(message);
    ctx.log.info({ event: "mail.sent", kind, intentId }, "e-mail sent");
    return true;
  } catch {
    ctx.log.warn({ event: "mail.failed", kind, intentId }, "an e-mail could not be sent");
    return false;
  }
}
