/**
 * The table behind the `mcp-handler` subscription store: one row per subscription key (the id
 * `mcp-handler` derives from principal, callback URL, event name and arguments). `operation` is
 * the fencing token of the newest reservation: `prepare` replaces it in one statement, and every
 * commit is an UPDATE that names the token it holds, so a superseded or removed attempt changes
 * nothing. Delivery itself (URL, secret, outbox, retries) is `@doorbell/delivery`'s.
 *
 * Types and statements only: nothing from `@doorbell/store` is loaded at run time here.
 */
import type { Kysely, MigrationContext, PackageMigrations } from "@doorbell/store";

export interface McpHandlerSubscriptionRow {
  id: string;
  principal: string;
  name: string;
  /** The arguments as canonical JSON, exactly as subscribed. */
  arguments: string;
  /** The current reservation's fencing token. */
  operation: string;
  operation_expires_at: number;
  /** The delivery engine's subscription once a grant was committed; null while only reserved. */
  delivery_id: string | null;
  /** A sealed digest of the secret in force: a refresh with the same secret is no rotation. */
  secret_check: string | null;
  /** The granted expiry (epoch ms); null while only reserved. */
  refresh_before: number | null;
  created_at: number;
  updated_at: number;
}

export interface McpHandlerTables {
  mcp_handler_subscriptions: McpHandlerSubscriptionRow;
}

type Db = Kysely<McpHandlerTables>;

/** Run with `migrate(store, [deliveryMigrations, mcpHandlerMigrations])` before giving the store. */
export const mcpHandlerMigrations: PackageMigrations = {
  package: "mcp-events-mcp-handler",
  migrations: [
    {
      version: 1,
      name: "mcp_handler_subscriptions",
      async up(db: Kysely<unknown>, { types }: MigrationContext) {
        await db.schema
          .createTable("mcp_handler_subscriptions")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("principal", "text", (c) => c.notNull())
          .addColumn("name", "text", (c) => c.notNull())
          .addColumn("arguments", "text", (c) => c.notNull())
          .addColumn("operation", "text", (c) => c.notNull())
          .addColumn("operation_expires_at", types.timestamp, (c) => c.notNull())
          .addColumn("delivery_id", "text")
          .addColumn("secret_check", "text")
          .addColumn("refresh_before", types.timestamp)
          .addColumn("created_at", types.timestamp, (c) => c.notNull())
          .addColumn("updated_at", types.timestamp, (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex("mcp_handler_subscriptions_name")
          .on("mcp_handler_subscriptions")
          .columns(["name", "refresh_before"])
          .execute();
        await db.schema
          .createIndex("mcp_handler_subscriptions_principal")
          .on("mcp_handler_subscriptions")
          .columns(["principal"])
          .execute();
      },
    },
  ],
};

export const subscriptionRows = {
  find: (db: Db, id: string) =>
    db.selectFrom("mcp_handler_subscriptions").selectAll().where("id", "=", id).executeTakeFirst(),

  /** A new reservation for the key in one statement: it supersedes any older one, touching no grant. */
  async reserve(
    db: Db,
    key: { id: string; principal: string; name: string; arguments: string },
    operation: string,
    expiresAt: number,
    now: number,
  ): Promise<void> {
    await db
      .insertInto("mcp_handler_subscriptions")
      .values({
        ...key,
        operation,
        operation_expires_at: expiresAt,
        delivery_id: null,
        secret_check: null,
        refresh_before: null,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.column("id").doUpdateSet({ operation, operation_expires_at: expiresAt, updated_at: now }),
      )
      .execute();
  },

  /**
   * The row, if `operation` is still its current, unexpired reservation; inside a transaction the
   * UPDATE also holds the row until commit, so a concurrent prepare or remove waits for it.
   */
  claim: (db: Db, id: string, operation: string, now: number) =>
    db
      .updateTable("mcp_handler_subscriptions")
      .set({ updated_at: now })
      .where("id", "=", id)
      .where("operation", "=", operation)
      .where("operation_expires_at", ">", now)
      .returningAll()
      .executeTakeFirst(),

  /** Writes the grant under the same fencing token; false when the token is no longer current. */
  async grant(
    db: Db,
    id: string,
    operation: string,
    patch: Pick<McpHandlerSubscriptionRow, "delivery_id" | "secret_check" | "refresh_before" | "updated_at">,
  ): Promise<boolean> {
    const result = await db
      .updateTable("mcp_handler_subscriptions")
      .set(patch)
      .where("id", "=", id)
      .where("operation", "=", operation)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** Deletes the key and returns what it was: a delayed commit then finds no row to match. */
  remove: (db: Db, id: string) =>
    db.deleteFrom("mcp_handler_subscriptions").where("id", "=", id).returningAll().executeTakeFirst(),

  /** Granted, unexpired subscriptions to one event. */
  live: (db: Db, name: string, now: number) =>
    db
      .selectFrom("mcp_handler_subscriptions")
      .selectAll()
      .where("name", "=", name)
      .where("delivery_id", "is not", null)
      .where("refresh_before", ">", now)
      .execute(),

  async countFor(db: Db, principal: string): Promise<number> {
    const row = await db
      .selectFrom("mcp_handler_subscriptions")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("principal", "=", principal)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  },

  /** Lapsed grants and abandoned reservations, for the sweep. */
  stale: (db: Db, now: number) =>
    db
      .selectFrom("mcp_handler_subscriptions")
      .selectAll()
      .where((eb) =>
        eb.or([
          eb("refresh_before", "<=", now),
          eb.and([eb("delivery_id", "is", null), eb("operation_expires_at", "<=", now)]),
        ]),
      )
      .limit(500)
      .execute(),

  /** Deletes a stale row only if nobody reserved or refreshed it since it was read. */
  async removeIfUnchanged(db: Db, row: McpHandlerSubscriptionRow): Promise<boolean> {
    const result = await db
      .deleteFrom("mcp_handler_subscriptions")
      .where("id", "=", row.id)
      .where("operation", "=", row.operation)
      .where("updated_at", "=", row.updated_at)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },
};
