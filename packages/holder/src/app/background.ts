/**
 * The holder's background work: expiry, the push sweep, digests that waited and purges, run by
 * one process among all on the database, and this process's delivery worker.
 */
import type { DeliveryEngine, Worker } from "@doorbell/delivery";
import { type Background, startBackground } from "../cluster/background.js";
import type { HolderOAuth } from "../oauth/index.js";
import type { PushService } from "../push/service.js";
import type { OpenedStore } from "./open.js";
import type { CreateHolderOptions, HolderSettings } from "./options.js";
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
  const { log } = parts.settings;
  const background = startBackground({
    store: parts.opened.handle,
    intervalMs: options.expiryIntervalMs ?? 60_000,
    async work() {
      const count = await services.intents.expireDue();
      if (count > 0) log.info({ event: "intents.expired", count }, "intents expired");
      await push.sweep();
      await services.consent.sendDueDigests();
      await oauth?.purgeExpired();
    },
    onError: (error) => log.error({ event: "intents.expire_failed", error: error.name }, error.message),
  });
  started.background = background;
  await background.tick();
  const worker = parts.delivery.worker();
  started.worker = worker;
  worker.start();
}
