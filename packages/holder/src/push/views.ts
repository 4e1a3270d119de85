/** How a subscription reads to the agent (§9) and to the person (receipts); hosts are sealed at rest. */
import type { SubscriptionView } from "@doorbell/delivery";
import { PUSH_EVENTS, type PushEvent } from "@doorbell/intents";
import type { HolderContext } from "../context.js";
import type { PushRow } from "./schema.js";
import type { NotificationReceipt, PushStatus, PushSubscriptionView } from "./types.js";

export const iso = (ms: number): string => new Date(ms).toISOString();

export function statusOf(sub: SubscriptionView): PushStatus {
  switch (sub.status) {
    case "pending_verification":
      return "awaiting_verification";
    case "awaiting_approval":
      return "awaiting_person_approval";
    default:
      return sub.status;
  }
}

export function eventsOf(row: Pick<PushRow, "events_json">): PushEvent[] {
  return (JSON.parse(row.events_json) as string[]).filter((event): event is PushEvent =>
    (PUSH_EVENTS as readonly string[]).includes(event),
  );
}

export const hostsAad = (id: string): string => `holder.push.hosts:${id}`;

export function hostsOf(
  ctx: HolderContext,
  row: Pick<PushRow, "id" | "hosts_sealed">,
): { deliveryHost: string; relayFor?: string } {
  return JSON.parse(ctx.sealer.openText(row.hosts_sealed, hostsAad(row.id))) as {
    deliveryHost: string;
    relayFor?: string;
  };
}

export function answer(
  row: Pick<PushRow, "approval" | "events_json">,
  sub: SubscriptionView,
): PushSubscriptionView {
  return {
    specVersion: "0.4",
    type: "push-subscription",
    subscriptionId: sub.id,
    status: statusOf(sub),
    approval: row.approval,
    events: eventsOf(row),
    expiresAt: iso(sub.expiresAt),
    refreshBefore: iso(sub.refreshBefore),
    ...(sub.status === "ended" && sub.endedReason !== null ? { endedReason: sub.endedReason } : {}),
  };
}

export function receipt(ctx: HolderContext, row: PushRow, sub: SubscriptionView): NotificationReceipt {
  const hosts = hostsOf(ctx, row);
  return {
    id: row.id,
    status: statusOf(sub),
    approval: row.approval,
    deliveryHost: hosts.deliveryHost,
    ...(hosts.relayFor === undefined ? {} : { relayFor: hosts.relayFor }),
    events: eventsOf(row),
    createdAt: row.created_at,
    lastNotifiedAt: sub.deliveryStatus.lastDeliveryAt,
    listening:
      sub.status === "active" && sub.deliveryStatus.active && sub.deliveryStatus.failedSince === null,
    ...(sub.status === "ended" && sub.endedReason !== null ? { endedReason: sub.endedReason } : {}),
    ...(sub.disabledAt === null ? {} : { disabledAt: sub.disabledAt }),
  };
}
