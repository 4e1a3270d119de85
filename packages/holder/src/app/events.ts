/** MCP Events on the MCP endpoint: what changed, told to the sessions and webhooks that follow it. */
import type { DeliveryEngine, DeliveryTables } from "@doorbell/delivery";
import type { EventsTables } from "@doorbell/mcp-events";
import { asTables, type Sealer } from "@doorbell/store";
import { createHolderEvents, type HolderEvents } from "../events/index.js";
import type { HolderHosts } from "./context.js";
import type { OpenedStore } from "./open.js";
import type { CreateHolderOptions, HolderSettings } from "./options.js";
import type { HolderServices } from "./services.js";

/** `undefined` when `events: false`. */
export async function openHolderEvents(
  options: CreateHolderOptions,
  parts: {
    opened: OpenedStore;
    services: HolderServices;
    sealer: Sealer;
    delivery: DeliveryEngine;
    hosts: HolderHosts;
    settings: HolderSettings;
  },
): Promise<HolderEvents | undefined> {
  if (options.events === false) return undefined;
  const { opened, sealer, delivery } = parts;
  return createHolderEvents({
    db: opened.store.db,
    intents: parts.services.intents,
    clock: parts.settings.clock,
    // The subscriptions and their outbox in the holder's database, delivered by its worker.
    webhook: {
      policy: parts.hosts.egress(),
      store: asTables<DeliveryTables & EventsTables>(opened.handle),
      sealer,
      engine: delivery,
    },
    ...(options.events?.tuning === undefined ? {} : { tuning: options.events.tuning }),
  });
}
