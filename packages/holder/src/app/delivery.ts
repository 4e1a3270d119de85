/** The delivery engine that rings the agents' doorbells, with its counters on /metrics. */
import { createDeliveryEngine, type DeliveryEngine, type DeliveryTables } from "@doorbell/delivery";
import { asTables, type Sealer } from "@doorbell/store";
import type { EgressPolicy } from "@doorbell/webhooks";
import type { HolderMetrics } from "../observability/metrics.js";
import { oldestPendingAgeMs } from "../observability/outbox-age.js";
import { coalescedMatchesDoorbell } from "../push/coalesced-doorbell.js";
import type { OpenedStore } from "./open.js";
import type { EndpointHealthDelivery } from "./operator-webhook.js";
import type { HolderSettings } from "./options.js";

export function holderDelivery(
  opened: OpenedStore,
  sealer: Sealer,
  policy: EgressPolicy,
  metrics: HolderMetrics,
  settings: HolderSettings,
  health: EndpointHealthDelivery = {},
): DeliveryEngine {
  const { clock, log } = settings;
  const outbox = asTables<DeliveryTables>(opened.handle);
  const delivery = createDeliveryEngine({
    store: outbox,
    sealer,
    policy,
    clock,
    coalesce: coalescedMatchesDoorbell,
    ...(health.endpointDisableAfterMs === undefined
      ? {}
      : { endpointHealth: { disableAfterMs: health.endpointDisableAfterMs } }),
    logger: log.child({ component: "delivery" }),
  });
  metrics.include(delivery.metrics.registry);
  metrics.watchPendingAge(() => oldestPendingAgeMs(outbox.db, clock()));
  return delivery;
}
