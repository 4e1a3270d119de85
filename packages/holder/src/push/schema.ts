import { defineMigrations, type Migration } from "@doorbell/store";

/** How the person allows a subscription (push profile §6 rule 3; `not-required`: a test call, rule 9). */
export type Approval = "on-consent-page" | "sent-to-verified-channel" | "granted" | "not-required";

/**
 * The holder's side of one push subscription; the delivery engine's `delivery_subscriptions` row
 * with the same id holds its status, lease, sealed endpoint and secret. Nothing here is secret in
 * clear: the url only as a keyed hash (to recognise a renewal), the hosts shown to the person sealed.
 */
export interface PushRow {
  /** The delivery engine's subscription id (`sub_…`), also the agent's subscriptionId. */
  id: string;
  intent_id: string;
  /** Keyed hash of delivery.url: the same code and url renew (§4.1). */
  url_hash: string;
  /** Sealed JSON { deliveryHost, relayFor? }: what the approval and manage pages show. */
  hosts_sealed: string;
  /** JSON array of the event types asked for. */
  events_json: string;
  approval: Approval;
  /** On the consent page: 1 when the person ticked this subscription's separate choice. */
  consent_choice: number;
  /** Keyed hash of the token in the approval link sent to the verified channel. */
  approval_token_hash: string | null;
  approval_sent_at: number | null;
  test: number;
  created_at: number;
}

/**
 * How far one subscription's `intent.matches.delivered` doorbells have counted —
 * the last match counted (its deliveredAt and match_seq), for the criteria that took effect at
 * `since` (the intent's matching_since then). Every path that rings for matches counts the matches
 * after it and moves it, so a match is counted once whichever process or path sees it first.
 * No row: nothing counted yet.
 */
export interface PushAnnouncedRow {
  subscription_id: string;
  since: number;
  at: number;
  seq: number;
}

/**
 * The webhook-ids of end requests a subscription's receiver sent (subscriber-end.ts), kept for the
 * timestamp window so that one is acted on once, whichever process it reaches.
 */
export interface PushEndSeenRow {
  subscription_id: string;
  webhook_id: string;
  seen_at: number;
}

export interface PushTables {
  holder_push: PushRow;
  holder_push_announced: PushAnnouncedRow;
  holder_push_end_seen: PushEndSeenRow;
}

const pushTable: Migration = {
  version: 1,
  name: "holder_push",
  async up(db, { types }) {
    await db.schema
      .createTable("holder_push")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("intent_id", "text", (c) => c.notNull().references("holder_intents.id").onDelete("cascade"))
      .addColumn("url_hash", "text", (c) => c.notNull())
      .addColumn("hosts_sealed", "text", (c) => c.notNull())
      .addColumn("events_json", types.json, (c) => c.notNull())
      .addColumn("approval", "text", (c) => c.notNull())
      .addColumn("consent_choice", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("approval_token_hash", "text", (c) => c.unique())
      .addColumn("approval_sent_at", types.timestamp)
      .addColumn("test", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("created_at", types.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex("holder_push_intent").on("holder_push").column("intent_id").execute();
  },
};

const announcedMatches: Migration = {
  version: 2,
  name: "holder_push_announced",
  async up(db, { types }) {
    await db.schema
      .createTable("holder_push_announced")
      .addColumn("subscription_id", "text", (c) =>
        c.primaryKey().references("holder_push.id").onDelete("cascade"),
      )
      .addColumn("since", types.timestamp, (c) => c.notNull())
      .addColumn("at", types.timestamp, (c) => c.notNull())
      .addColumn("seq", types.bigint, (c) => c.notNull())
      .execute();
  },
};

const endRequestsSeen: Migration = {
  version: 3,
  name: "holder_push_end_seen",
  async up(db, { types }) {
    await db.schema
      .createTable("holder_push_end_seen")
      .addColumn("subscription_id", "text", (c) => c.notNull())
      .addColumn("webhook_id", "text", (c) => c.notNull())
      .addColumn("seen_at", types.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint("holder_push_end_seen_pk", ["subscription_id", "webhook_id"])
      .execute();
    await db.schema
      .createIndex("holder_push_end_seen_at")
      .on("holder_push_end_seen")
      .column("seen_at")
      .execute();
  },
};

/** Its own migration set, after the holder's and the delivery engine's tables exist. */
export const pushMigrations = defineMigrations("holder-push", [pushTable, announcedMatches, endRequestsSeen]);
