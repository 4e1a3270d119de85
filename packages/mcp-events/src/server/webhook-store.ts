/**
 * Webhook subscriptions kept in the database, so every process on it serves the same ones: a
 * subscription made through one process is refreshed, fed and ended by any other, and one whose
 * process died is fed by the others without a refresh. The row is the subscription's identity
 * (a primary key on `key`, so two processes creating the same one at once make one), its place in
 * the upstream (`cursor`, moved only by a compare-and-set in the same transaction that queues the
 * events it passed) and its lifecycle; delivery itself (endpoint, secret, outbox, retries) is
 * `@doorbell/delivery`'s, on the same database.
 *
 * This module only types the table and runs its statements; it imports nothing at run time, so
 * poll and push users never load `@doorbell/store` (the migrations are a plain object).
 */
import type { Kysely, MigrationContext, PackageMigrations } from "@doorbell/store";
import type { DialectName } from "../protocol/index.js";

export interface WebhookSubscriptionRow {
  /** digest(principal, url, id): the identity. */
  key: string;
  /** The id the client sees (SEP-3415: derived from principal, url, name and arguments). */
  id: string;
  /** digest(principal, url): verification results are shared per (principal, url). */
  owner_url: string;
  /** The delivery engine's subscription. */
  delivery_id: string;
  channel: "mcp" | "mcp-standard";
  dialect: DialectName;
  name: string;
  /** The arguments as canonical JSON, as the client sent them. */
  params: string;
  principal: string | null;
  /** What a change is addressed to (`EventDefinition.topic`), when the type names one. */
  topic: string | null;
  refresh_before: number;
  /** A digest of the secret last supplied, sealed: a refresh with the same secret is not a rotation. */
  secret_check: string;
  /** The next check starts here; null before the first. */
  cursor: string | null;
  /** An events error sent as a signed envelope, kept for the refresh that follows it. */
  reported: string | null;
  truncated: number;
  /** Authorization was revoked: nothing more is delivered, the row waits for its TTL. */
  terminated: number;
  /** When some process should next run the check without being woken. */
  feed_due_at: number;
  authorized_at: number;
  created_at: number;
  updated_at: number;
}

export interface EventsTables {
  events_webhook_subscriptions: WebhookSubscriptionRow;
}

type Db = Kysely<EventsTables>;

/** Run with `migrate(store, [eventsMigrations, deliveryMigrations, …])` before giving the store. */
export const eventsMigrations: PackageMigrations = {
  package: "mcp-events",
  migrations: [
    {
      version: 1,
      name: "webhook_subscriptions",
      async up(db: Kysely<unknown>, { types }: MigrationContext) {
        await db.schema
          .createTable("events_webhook_subscriptions")
          .addColumn("key", "text", (c) => c.primaryKey())
          .addColumn("id", "text", (c) => c.notNull())
          .addColumn("owner_url", "text", (c) => c.notNull())
          .addColumn("delivery_id", "text", (c) => c.notNull())
          .addColumn("channel", "text", (c) => c.notNull())
          .addColumn("dialect", "text", (c) => c.notNull())
          .addColumn("name", "text", (c) => c.notNull())
          .addColumn("params", "text", (c) => c.notNull())
          .addColumn("principal", "text")
          .addColumn("topic", "text")
          .addColumn("refresh_before", types.timestamp, (c) => c.notNull())
          .addColumn("secret_check", "text", (c) => c.notNull())
          .addColumn("cursor", "text")
          .addColumn("reported", "text")
          .addColumn("truncated", types.boolean, (c) => c.notNull().defaultTo(0))
          .addColumn("terminated", types.boolean, (c) => c.notNull().defaultTo(0))
          .addColumn("feed_due_at", types.timestamp, (c) => c.notNull())
          .addColumn("authorized_at", types.timestamp, (c) => c.notNull())
          .addColumn("created_at", types.timestamp, (c) => c.notNull())
          .addColumn("updated_at", types.timestamp, (c) => c.notNull())
          .execute();
        for (const [index, columns] of [
          ["events_webhook_topic", ["name", "topic"]],
          ["events_webhook_id", ["id"]],
          ["events_webhook_owner_url", ["owner_url"]],
          ["events_webhook_due", ["feed_due_at"]],
          ["events_webhook_principal", ["principal"]],
        ] as const) {
          await db.schema
            .createIndex(index)
            .on("events_webhook_subscriptions")
            .columns([...columns])
            .execute();
        }
      },
    },
  ],
};

/** Topics bound as variables in one statement. */
const TOPICS_PER_STATEMENT = 500;

/** The statements on the table; each takes the handle or a transaction. */
export const webhookRows = {
  find: (db: Db, key: string) =>
    db.selectFrom("events_webhook_subscriptions").selectAll().where("key", "=", key).executeTakeFirst(),

  /** Inserts unless the key exists; true when this call made the row. */
  async insert(db: Db, row: WebhookSubscriptionRow): Promise<boolean> {
    const result = await db
      .insertInto("events_webhook_subscriptions")
      .values(row)
      .onConflict((oc) => oc.column("key").doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  },

  update: (db: Db, key: string, patch: Partial<WebhookSubscriptionRow>) =>
    db.updateTable("events_webhook_subscriptions").set(patch).where("key", "=", key).execute(),

  /**
   * Moves the cursor from `from` to `to` only if nobody moved it meanwhile: the one process whose
   * move succeeds queues the events between them, in the same transaction.
   */
  async advance(
    db: Db,
    key: string,
    from: string | null,
    patch: Pick<WebhookSubscriptionRow, "cursor" | "updated_at"> & Partial<WebhookSubscriptionRow>,
  ): Promise<boolean> {
    const result = await db
      .updateTable("events_webhook_subscriptions")
      .set(patch)
      .where("key", "=", key)
      .where("terminated", "=", 0)
      .where("cursor", from === null ? "is" : "=", from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** Deletes the row if it is still the one read (a refresh elsewhere may have replaced it). */
  async remove(db: Db, key: string, deliveryId: string): Promise<boolean> {
    const result = await db
      .deleteFrom("events_webhook_subscriptions")
      .where("key", "=", key)
      .where("delivery_id", "=", deliveryId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },

  /** Live rows of one type, of one topic (or of any of several) when given. */
  async live(db: Db, name: string, topic?: string | readonly string[]) {
    const query = db
      .selectFrom("events_webhook_subscriptions")
      .selectAll()
      .where("name", "=", name)
      .where("terminated", "=", 0);
    if (topic === undefined) return query.execute();
    if (typeof topic === "string") return query.where("topic", "=", topic).execute();
    const rows = [];
    for (let first = 0; first < topic.length; first += TOPICS_PER_STATEMENT)
      rows.push(
        ...(await query.where("topic", "in", topic.slice(first, first + TOPICS_PER_STATEMENT)).execute()),
      );
    return rows;
  },

  byId: (db: Db, id: string) =>
    db
      .selectFrom("events_webhook_subscriptions")
      .selectAll()
      .where("id", "=", id)
      .where("terminated", "=", 0)
      .execute(),

  all: (db: Db) => db.selectFrom("events_webhook_subscriptions").selectAll().execute(),

  /** Rows another subscription of the same (principal, url) may share a verification with. */
  sameEndpoint: (db: Db, ownerUrl: string) =>
    db
      .selectFrom("events_webhook_subscriptions")
      .select(["delivery_id"])
      .where("owner_url", "=", ownerUrl)
      .orderBy("created_at", "desc")
      .limit(5)
      .execute(),

  async countFor(db: Db, principal: string | null): Promise<number> {
    const row = await db
      .selectFrom("events_webhook_subscriptions")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("principal", principal === null ? "is" : "=", principal)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  },

  async count(db: Db): Promise<number> {
    const row = await db
      .selectFrom("events_webhook_subscriptions")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  },

  expired: (db: Db, now: number) =>
    db.selectFrom("events_webhook_subscriptions").selectAll().where("refresh_before", "<=", now).execute(),

  /**
   * Takes up to `limit` rows whose next unprompted check is due and moves their due time on, in
   * one statement: each due row goes to one process (PostgreSQL: SKIP LOCKED), and a process that
   * dies leaves its rows due for the others.
   */
  async claimDue(
    db: Db,
    dialect: "sqlite" | "postgres",
    now: number,
    next: number,
    limit: number,
  ): Promise<WebhookSubscriptionRow[]> {
    let due = db
      .selectFrom("events_webhook_subscriptions")
      .select("key")
      .where("feed_due_at", "<=", now)
      .where("terminated", "=", 0)
      .orderBy("feed_due_at")
      .limit(limit);
    if (dialect === "postgres") due = due.forUpdate().skipLocked();
    return db
      .updateTable("events_webhook_subscriptions")
      .set({ feed_due_at: next })
      .where("key", "in", due)
      .returningAll()
      .execute();
  },
};
