import { defineMigrations, sql } from "@doorbell/store";

/**
 * One intent published through the forwarder. The holder's intentCode is sealed under the agent's
 * forwarder code (codes.ts): without that code, which only the agent holds, nobody here opens it.
 */
export interface ForwarderIntentRow {
  /** `fwi_…`; also the HKDF salt and AEAD associated data of the sealed holder code. */
  id: string;
  /** Keyed hash of the forwarder code (the forwarder's keyring, purpose `forwarder.codes`). */
  code_hash: string;
  /** The holder's intentCode, sealed under a key derived from the forwarder code. */
  holder_code_sealed: string;
  created_at: number;
}

export type RelayStatus = "active" | "ended";

/**
 * Push profile §7 rule 2: one relay between a holder's subscription and the agent's. No code, no
 * statement, no match. The agent's url and secret live sealed in the delivery engine's row
 * `agent_subscription_id`; the two keyed hashes of the forwarder code only let the agent who
 * holds that code find and end its own relays, and open nothing (rule 1: nothing here opens the
 * holder's code).
 */
export interface RelayRow {
  /** The delivery engine's subscription towards the agent (`sub_…`): the agent's subscriptionId. */
  agent_subscription_id: string;
  /** Keyed hash of the random relay path (purpose `forwarder.relay-path`). */
  path_hash: string;
  /** Keyed hash of the forwarder code (purpose `forwarder.relay-owner`): who may renew or end it. */
  owner_hash: string;
  /** Keyed hash of code + agent url (purpose `forwarder.relay-endpoint`): same code and url renew. */
  endpoint_hash: string;
  holder_host: string;
  /** Null until the holder answered intent_subscribe_events. */
  holder_subscription_id: string | null;
  /** The forwarder's secret towards the holder, sealed; the previous one until the change settles. */
  holder_secret_sealed: string;
  holder_previous_secret_sealed: string | null;
  holder_previous_until: number | null;
  expires_at: number;
  refresh_before: number;
  status: RelayStatus;
  ended_reason: string | null;
  /**
   * When the holder is next to be sent the end request for an ended relay (holder-ends.ts); null
   * when there is nothing to send: live, told, the holder ended it, or it stopped trying.
   */
  holder_end_due_at: number | null;
  /** End requests sent for this relay so far. */
  holder_end_attempts: number;
  created_at: number;
  updated_at: number;
}

/** Holder webhook-ids already relayed, so a retry after a lost 2xx is not relayed twice (24 h). */
export interface RelaySeenRow {
  agent_subscription_id: string;
  webhook_id: string;
  seen_at: number;
}

export interface ForwarderTables {
  forwarder_intents: ForwarderIntentRow;
  forwarder_relays: RelayRow;
  forwarder_relay_seen: RelaySeenRow;
}

export const forwarderMigrations = defineMigrations("forwarder", [
  {
    version: 1,
    name: "intents_and_relays",
    async up(db, { types }) {
      await db.schema
        .createTable("forwarder_intents")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("code_hash", "text", (c) => c.notNull().unique())
        .addColumn("holder_code_sealed", "text", (c) => c.notNull())
        .addColumn("created_at", types.timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("forwarder_relays")
        .addColumn("agent_subscription_id", "text", (c) => c.primaryKey())
        .addColumn("path_hash", "text", (c) => c.notNull().unique())
        .addColumn("owner_hash", "text", (c) => c.notNull())
        .addColumn("endpoint_hash", "text", (c) => c.notNull())
        .addColumn("holder_host", "text", (c) => c.notNull())
        .addColumn("holder_subscription_id", "text")
        .addColumn("holder_secret_sealed", "text", (c) => c.notNull())
        .addColumn("holder_previous_secret_sealed", "text")
        .addColumn("holder_previous_until", types.timestamp)
        .addColumn("expires_at", types.timestamp, (c) => c.notNull())
        .addColumn("refresh_before", types.timestamp, (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("ended_reason", "text")
        .addColumn("created_at", types.timestamp, (c) => c.notNull())
        .addColumn("updated_at", types.timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("forwarder_relays_endpoint")
        .on("forwarder_relays")
        .column("endpoint_hash")
        .execute();
      await db.schema
        .createTable("forwarder_relay_seen")
        .addColumn("agent_subscription_id", "text", (c) => c.notNull())
        .addColumn("webhook_id", "text", (c) => c.notNull())
        .addColumn("seen_at", types.timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint("forwarder_relay_seen_pk", ["agent_subscription_id", "webhook_id"])
        .execute();
      await db.schema
        .createIndex("forwarder_relay_seen_at")
        .on("forwarder_relay_seen")
        .column("seen_at")
        .execute();
    },
  },
  {
    version: 2,
    name: "relay_holder_code_and_status_index",
    async up(db) {
      await db.schema.alterTable("forwarder_relays").addColumn("holder_code_sealed", "text").execute();
      // The ending sweep looks at live relays every second.
      await db.schema
        .createIndex("forwarder_relays_status")
        .on("forwarder_relays")
        .column("status")
        .execute();
    },
  },
  {
    // Version 2 kept a copy of the holder's code that the forwarder's keyring alone opened: §7 rule 1
    // forbids it (docs/decisions.md). Emptied first, so PostgreSQL, which only
    // hides a dropped column, keeps no value in live rows either; then dropped on both engines.
    version: 3,
    name: "relay_holder_code_dropped",
    async up(db) {
      await sql`update forwarder_relays set holder_code_sealed = null`.execute(db);
      await db.schema.alterTable("forwarder_relays").dropColumn("holder_code_sealed").execute();
    },
  },
  {
    // The end request towards the holder, retried a few times: when it is due, and how often it went.
    version: 4,
    name: "relay_holder_end",
    async up(db, { types }) {
      await db.schema
        .alterTable("forwarder_relays")
        .addColumn("holder_end_due_at", types.timestamp)
        .execute();
      await db.schema
        .alterTable("forwarder_relays")
        .addColumn("holder_end_attempts", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createIndex("forwarder_relays_holder_end_due")
        .on("forwarder_relays")
        .column("holder_end_due_at")
        .execute();
    },
  },
]);
