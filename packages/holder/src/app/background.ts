/**
 * The holder's background work: expiry, the push sweep, digests that waited, purges and the
 * delivery log's retention, run by one process among all on the database, and this process's
 * delivery worker.
 */
import type { DeliveryEngine, Worker } from "@doorbell/delivery";
import { type Background, startBackground } from "../cluster/background.js";
import type { HolderOAuth } from "../oauth/index.js";
import type { PushService } from "../push/service.js";
import type { OpenedStore } from "./open.js";
import type { CreateHolderOptions, HolderSettings } from "./options.js";
import { deliveryRetentionStep } from "./retention.js";
import type { HolderServices } from "./services.js";

export async function startHolderBackground(
  options: CreateHolderOptions,
  parts: {
    opened: OpenedStore;
    settings: HolderSettings;
    services: HolderServices;
    push: PushService;
    oauth: HolderOAuth | undefined;
    delivery: DeliveryEngine;
  },
  /** Told each part as soon as it runs, so a failed start stops it. */
  started: { background?: Background | undefined; worker?: Worker | undefined },
): Promise<void> {
  const { services, push, oauth } = parts;
  const { log, clock } = parts.settings;
  const prune = deliveryRetentionStep(parts.opened.handle, options.delivery ?? {}, clock, log);
  const background = startBackground({
    store: parts.opened.handle,
    intervalMs: options.expiryIntervalMs ?? 60_000,
    async work(signal) {
      // Step by step, each step's batches checking too: a process that lost the lead stops at
      // the next one and leaves the rest to the new leader.
      const steps = [
        async () => {
          const count = await services.intents.expireDue(signal);
          if (count > 0) log.info({ event: "intents.expired", count }, "intents expired");
        },
        () => push.sweep(),
        () => services.consent.sendDueDigests(signal),
        () => oauth?.purgeExpired(),
        () => prune(signal),
      ];
      for (const step of steps) {
        if (signal.aborted) {
          log.warn(
            { event: "background.lead_lost" },
            "this process lost the lead; the rest of the pass is left to the new leader",
          );
          return;
        }
        await step();
      }
    },
    onError: (error) => log.error({ event: "intents.expire_failed", error: error.name }, error.message),
  });
  started.background = background;
  await background.tick();
  const perHost = options.delivery?.perHostConcurrency;
  const worker = parts.delivery.worker(perHost === undefined ? {} : { perHostConcurrency: perHost });
  started.worker = worker;
  worker.start();
}
