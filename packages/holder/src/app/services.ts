/**
 * The services on one context, wired to each other: the one place the parts meet.
 *   intent activated/changed  → matching.onActivated (the intent against current offers)
 *   intent ended              → matching.onEnded (out of the index)
 *   matches recorded          → consent.sendMatchDigest (the person's e-mail)
 *                               + push.enqueueMatches, in the same transaction (the doorbells)
 *   intent activated / ended  → push.onActivated / push.onIntentEnded (approvals, subscriptions)
 *   matches recorded, intent activated / changed / ended
 *                             → changes (MCP Events: wakes that intent's subscriptions)
 */
import { atMostAtOnce } from "../at-most-at-once.js";
import { createOfferService } from "../catalogue/service.js";
import { createConsentService, type HolderConsentService } from "../consent/index.js";
import type { HolderContext } from "../context.js";
import { createDemandService } from "../demand.js";
import type { IntentChangeListener } from "../events/index.js";
import { createIntentService, type IntentHooks, type IntentServiceOptions } from "../intents/index.js";
import { SMTP_CONNECTIONS } from "../mail/smtp.js";
import { createMatchingService, type MatchingService } from "../matching/service.js";
import type { DemandService, IntentService, OfferService } from "../model/services.js";
import { createPushService, type PushOptions, type PushService } from "../push/service.js";

export interface HolderServices {
  intents: IntentService;
  consent: HolderConsentService;
  matching: MatchingService;
  offers: OfferService;
  demand: DemandService;
  /** The push profile, when the holder offers it (a delivery engine was given). */
  push?: PushService;
}

/**
 * The services on one context, wired to each other. Call `matching.start()` before serving. With
 * `push`, the holder offers the push profile: run `deliveryMigrations` and `pushMigrations` first.
 */
export function createHolderServices(
  ctx: HolderContext,
  options: { push?: PushOptions; changes?: IntentChangeListener; intents?: IntentServiceOptions } = {},
): HolderServices {
  const changes = options.changes;
  let consent: HolderConsentService | undefined;
  const push = options.push === undefined ? undefined : createPushService(ctx, options.push);
  const matching = createMatchingService(ctx, {
    // Called only after `intents` below exists: the intent service decides who reads which intent.
    readableIntent: (principal, id) => intents.readableIntent(principal, id),
    async onMatched(intentIds) {
      // First the listeners of every process (it only sends), then the slower work here.
      changes?.matchesRecorded(intentIds);
      // A few at a time, one per kept SMTP connection: an import that matched hundreds of
      // intents does not wait for their mails one after another.
      const mail = consent;
      if (mail !== undefined)
        await atMostAtOnce(SMTP_CONNECTIONS, intentIds, (id) => mail.sendMatchDigest(id));
      await push?.changed(intentIds);
    },
    ...(push === undefined ? {} : { sink: push }),
  });
  const hooks: IntentHooks = {
    async onActivated(intentId) {
      await matching.onActivated(intentId);
      await push?.onActivated(intentId);
      changes?.statusChanged(intentId);
    },
    async onEnded(intentId, reason) {
      matching.onEnded(intentId);
      await push?.onIntentEnded(intentId, reason);
      changes?.statusChanged(intentId);
    },
    async onChanged(intentId) {
      await matching.onActivated(intentId);
      changes?.statusChanged(intentId);
    },
  };
  // The OAuth options (who owns an intent published with a token) when OAuth is on.
  const intents = createIntentService(ctx, hooks, options.intents);
  consent = createConsentService(ctx, hooks);
  return {
    intents,
    consent,
    matching,
    offers: createOfferService(ctx, matching),
    demand: createDemandService(ctx),
    ...(push === undefined ? {} : { push }),
  };
}
