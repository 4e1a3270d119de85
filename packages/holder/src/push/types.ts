/** What the push service answers and takes (push profile 0.4 §4, §9; the pages' receipts). */

import type { DeliveryEngine } from "@doorbell/delivery";
import type { PushEvent } from "@doorbell/intents";
import type { MatchSink } from "../model/services.js";
import type { Principal } from "../model/types.js";
import type { Approval } from "./schema.js";

export type PushStatus = "awaiting_verification" | "awaiting_person_approval" | "active" | "ended";

/** The §9 answer of intent_subscribe_events and intent_unsubscribe_events. */
export interface PushSubscriptionView {
  specVersion: "0.4";
  type: "push-subscription";
  subscriptionId: string;
  status: PushStatus;
  approval?: Approval;
  events: PushEvent[];
  expiresAt: string;
  refreshBefore: string;
  endedReason?: string;
}

export interface SubscribeRequest {
  delivery: { url: string; secret: string };
  events?: readonly PushEvent[];
  /** Through a forwarder: the host of the agent's own endpoint (§7 rule 3). */
  relayFor?: string;
  /** A test call (`x-isto-test: 1`, §6 rule 9): verified, never waits for the person, short lease. */
  test?: boolean;
}

/** One subscription as the person sees it on the manage and approval pages (open question 5). */
export interface NotificationReceipt {
  id: string;
  status: PushStatus;
  approval: Approval;
  deliveryHost: string;
  relayFor?: string;
  events: PushEvent[];
  createdAt: number;
  /** When the agent was last notified; null before the first doorbell. */
  lastNotifiedAt: number | null;
  /** Still listening: active, and deliveries are not failing. */
  listening: boolean;
  endedReason?: string;
  /** When its endpoint was disabled for failing every attempt too long (delivery health.ts). */
  disabledAt?: number;
}

export interface PushOptions {
  engine: DeliveryEngine;
  /** A lease of at most 30 days (§6 rule 7); shorter when the intent ends sooner. */
  leaseMs?: number;
  /** A test subscription's lease (rule 9: the holder SHOULD end it soon). Default 10 minutes. */
  testLeaseMs?: number;
  /** §6 rule 6: at most 3 subscriptions per intent; a holder may lower it. */
  maxPerIntent?: number;
}

/** The push profile's service; it is also matching's sink (MatchSink) for the doorbells' outbox. */
export interface PushService extends MatchSink {
  subscribe(principal: Principal, request: SubscribeRequest): Promise<PushSubscriptionView>;
  unsubscribe(principal: Principal, subscriptionId: string): Promise<PushSubscriptionView>;
  /** The subscription as its intentCode holder may see it (for the MCP resource). */
  view(principal: Principal, subscriptionId: string): Promise<PushSubscriptionView>;
  /** After an intent became active: settle consent-page choices, mail pending approval links. */
  onActivated(intentId: string): Promise<void>;
  /** After an intent ended: end every subscription to it (§4.2). */
  onIntentEnded(intentId: string, reason: "withdrawn" | "expired"): Promise<void>;
  /** Subscriptions the consent page offers as separate, unticked choices. */
  consentChoices(intentId: string): Promise<NotificationReceipt[]>;
  /** Records the ticked choices (consent page POST); the rest end at confirmation. */
  chooseOnConsent(intentId: string, chosenIds: readonly string[]): Promise<void>;
  /** The approval page behind the mailed link. */
  approvalView(token: string): Promise<{ intentId: string; statement: string; receipt: NotificationReceipt }>;
  approveByToken(token: string): Promise<NotificationReceipt>;
  /** The manage page: every subscription of the intent, ended ones until they are purged. */
  receipts(intentId: string): Promise<NotificationReceipt[]>;
  /** The person allows a subscription from the manage page (a page of the verified channel). */
  approve(intentId: string, subscriptionId: string): Promise<NotificationReceipt>;
  /** The person takes it back: ended at once, the agent told once (§6 rule 3). */
  revoke(intentId: string, subscriptionId: string): Promise<NotificationReceipt>;
  /**
   * The end request of a subscription's receiver (a forwarder whose agent's side ended): verified
   * with the subscription's secret, it ends the subscription as a 410 does; refused, nothing changes.
   */
  endBySubscriber(headers: Headers, body: Uint8Array): Promise<SubscriberEndAnswer>;
  /** Ends subscriptions of intents that ended without a hook (drafts) and forgets purged ones. */
  sweep(): Promise<number>;
  /** Called with subscription ids when something changed for them (MCP resource updates). */
  onChange(listener: (subscriptionIds: readonly string[]) => void): () => void;
  /** The intent a subscription follows, or undefined for an unknown id. */
  intentOf(subscriptionId: string): Promise<string | undefined>;
  /** Whether a subscription with this id exists (the listen guard refuses unknown resources). */
  exists(subscriptionId: string): Promise<boolean>;
  /** Tells this process's listeners of subscriptions another process changed. */
  relay(subscriptionIds: readonly string[]): void;
  /** The ids of live subscriptions of these intents (after a commit, for onChange). */
  changed(intentIds: readonly string[]): Promise<void>;
}

export type SubscriberEndCode = "ERR_PUSH_END_INVALID" | "ERR_PUSH_END_UNVERIFIED" | "ERR_PUSH_END_REPLAYED";

/** What the holder answers a subscriber's signed end request. */
export type SubscriberEndAnswer =
  | { ok: true; subscriptionId: string; endedReason: string }
  | { ok: false; status: 400 | 401 | 409; code: SubscriberEndCode; message: string };
