// Every table of the agreements package and the one migration list that creates them, in one
// place: the inbox's tables (versions 1 and 2) and the A2A task store's (version 3). The stores in
// inbox/ and a2a/ only read and write them.
import { defineMigrations, type Kysely, type MigrationContext } from "@doorbell/store";

export interface InboxTables {
  agreements_inboxes: { address: string; policy: string; expires_at: number | null; created_at: number };
  agreements_messages: {
    inbox: string;
    id: string;
    thread: string;
    direction: string;
    type: string;
    hash: string;
    canonical: string;
    jws: string | null;
    result: string;
    at: number;
  };
  agreements_nonces: { inbox: string; sender: string; nonce: string; expires_at: number };
  agreements_threads: { inbox: string; thread: string; state: string; channel: string; updated_at: number };
  agreements_pending: {
    inbox: string;
    id: string;
    thread: string;
    channel: string;
    draft: string;
    reasons: string;
    created_at: number;
  };
  agreements_records: { inbox: string; thread: string; record: string };
  agreements_a2a_tasks: {
    inbox: string;
    thread: string;
    role: string;
    task_id: string;
    endpoint: string | null;
  };
}

export interface TaskTables {
  agreements_a2a_task_store: {
    tenant: string;
    owner: string;
    id: string;
    context_id: string;
    state: number;
    status_at: string;
    body: string;
  };
}

/** The SDK's task store table: version 3, so every inbox database has it. */
async function createTaskStoreTable(db: Kysely<unknown>, { types }: MigrationContext): Promise<void> {
  await db.schema
    .createTable("agreements_a2a_task_store")
    .addColumn("tenant", "text", (c) => c.notNull())
    .addColumn("owner", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("context_id", "text", (c) => c.notNull())
    .addColumn("state", "integer", (c) => c.notNull())
    .addColumn("status_at", "text", (c) => c.notNull())
    .addColumn("body", types.json, (c) => c.notNull())
    .addPrimaryKeyConstraint("agreements_a2a_task_store_pk", ["tenant", "owner", "id"])
    .execute();
  await db.schema
    .createIndex("agreements_a2a_task_store_context")
    .on("agreements_a2a_task_store")
    .columns(["tenant", "owner", "context_id"])
    .execute();
}

export const agreementsInboxMigrations = defineMigrations("agreements", [
  {
    version: 1,
    name: "agent_inboxes",
    async up(db, { types }) {
      await db.schema
        .createTable("agreements_inboxes")
        .addColumn("address", "text", (c) => c.primaryKey())
        .addColumn("policy", types.json, (c) => c.notNull())
        .addColumn("expires_at", types.timestamp)
        .addColumn("created_at", types.timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("agreements_messages")
        .addColumn("inbox", "text", (c) => c.notNull())
        .addColumn("id", "text", (c) => c.notNull())
        .addColumn("thread", "text", (c) => c.notNull())
        .addColumn("direction", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("hash", "text", (c) => c.notNull())
        .addColumn("canonical", "text", (c) => c.notNull())
        .addColumn("jws", "text")
        .addColumn("result", "text", (c) => c.notNull())
        .addColumn("at", types.timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint("agreements_messages_pk", ["inbox", "id"])
        .execute();
      await db.schema
        .createIndex("agreements_messages_thread")
        .on("agreements_messages")
        .columns(["inbox", "thread", "at"])
        .execute();
      await db.schema
        .createTable("agreements_nonces")
        .addColumn("inbox", "text", (c) => c.notNull())
        .addColumn("sender", "text", (c) => c.notNull())
        .addColumn("nonce", "text", (c) => c.notNull())
        .addColumn("expires_at", types.timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint("agreements_nonces_pk", ["inbox", "sender", "nonce"])
        .execute();
      await db.schema
        .createTable("agreements_threads")
        .addColumn("inbox", "text", (c) => c.notNull())
        .addColumn("thread", "text", (c) => c.notNull())
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("channel", "text", (c) => c.notNull())
        .addColumn("updated_at", types.timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint("agreements_threads_pk", ["inbox", "thread"])
        .execute();
      await db.schema
        .createTable("agreements_pending")
        .addColumn("inbox", "text", (c) => c.notNull())
        .addColumn("id", "text", (c) => c.notNull())
        .addColumn("thread", "text", (c) => c.notNull())
        .addColumn("channel", "text", (c) => c.notNull())
        .addColumn("draft", types.json, (c) => c.notNull())
        .addColumn("reasons", types.json, (c) => c.notNull())
        .addColumn("created_at", types.timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint("agreements_pending_pk", ["inbox", "id"])
        .execute();
      await db.schema
        .createTable("agreements_records")
        .addColumn("inbox", "text", (c) => c.notNull())
        .addColumn("thread", "text", (c) => c.notNull())
        .addColumn("record", types.json, (c) => c.notNull())
        .addPrimaryKeyConstraint("agreements_records_pk", ["inbox", "thread"])
        .execute();
    },
  },
  {
    version: 2,
    name: "a2a_tasks",
    async up(db) {
      await db.schema
        .createTable("agreements_a2a_tasks")
        .addColumn("inbox", "text", (c) => c.notNull())
        .addColumn("thread", "text", (c) => c.notNull())
        .addColumn("role", "text", (c) => c.notNull())
        .addColumn("task_id", "text", (c) => c.notNull())
        .addColumn("endpoint", "text")
        .addPrimaryKeyConstraint("agreements_a2a_tasks_pk", ["inbox", "thread"])
        .execute();
    },
  },
  {
    // The A2A tasks themselves (the SDK's task store), so they outlive a restart.
    version: 3,
    name: "a2a_task_store",
    up: createTaskStoreTable,
  },
]);
