import { asTables, type Database } from "@doorbell/store";
import type { InboxTables } from "../schema.js";
import type { LimitsPolicy } from "./limits.js";
import type { ReceiverResult, ReceiverState } from "./receiver-checks.js";

/**
 * What an agent inbox keeps, behind one narrow interface: the inboxes (with their limits and
 * expiry), every message of every thread with its check result, the nonces seen per sender, each
 * thread's state, what waits for the owner, and the records. `createSqlInboxStore` keeps it in
 * SQLite or PostgreSQL through @doorbell/store; times are epoch milliseconds.
 */

export type ThreadState =
  | "working"
  | "waiting_for_owner"
  | "input_required"
  | "agreed"
  | "declined"
  | "cancelled"
  | "expired"
  | "refused";

export type Channel = "email" | "a2a";

/**
 * The A2A task that carries a thread: `server` when the task lives on this agent's A2A server
 * (the other side started the thread), `client` when it lives on the other side's, at `endpoint`
 * (its agent card address). `taskId` is empty until the other side has answered the first message.
 */
export interface TaskBinding {
  readonly inbox: string;
  readonly thread: string;
  readonly role: "server" | "client";
  readonly taskId: string;
  readonly endpoint: string | null;
}

export interface InboxRow {
  readonly address: string;
  readonly policy: LimitsPolicy;
  readonly expiresAt: number | null;
  readonly createdAt: number;
}

export interface StoredMessage {
  readonly inbox: string;
  readonly id: string;
  readonly thread: string;
  readonly direction: "in" | "out";
  readonly type: string;
  readonly hash: string;
  /** RFC 8785 text of the message. */
  readonly canonical: string;
  readonly jws: string | null;
  /** The receiver result for an incoming message; `sent` for ours. */
  readonly result: ReceiverResult | "sent";
  readonly at: number;
}

export interface PendingAnswer {
  readonly inbox: string;
  /** The draft's message id. */
  readonly id: string;
  readonly thread: string;
  readonly channel: Channel;
  /** The unsigned draft the agent would send. */
  readonly draft: unknown;
  readonly reasons: readonly string[];
  readonly createdAt: number;
}

export interface InboxStore {
  createInbox(row: InboxRow): Promise<void>;
  getInbox(address: string): Promise<InboxRow | undefined>;
  /** Deletes an inbox and everything it kept. */
  deleteInbox(address: string): Promise<void>;
  /** Deletes every inbox whose time is up; returns their addresses. */
  deleteExpired(now: number): Promise<string[]>;
  receiverState(inbox: string): ReceiverState;
  saveMessage(message: StoredMessage): Promise<void>;
  message(inbox: string, id: string): Promise<StoredMessage | undefined>;
  thread(inbox: string, thread: string): Promise<StoredMessage[]>;
  setThreadState(
    inbox: string,
    thread: string,
    state: ThreadState,
    channel: Channel,
    now: number,
  ): Promise<void>;
  threadState(inbox: string, thread: string): Promise<{ state: ThreadState; channel: Channel } | undefined>;
  addPending(pending: PendingAnswer): Promise<void>;
  pending(inbox: string): Promise<PendingAnswer[]>;
  /** Removes and returns one waiting answer (undefined when it was already decided). */
  takePending(inbox: string, id: string): Promise<PendingAnswer | undefined>;
  saveRecord(inbox: string, thread: string, record: unknown): Promise<void>;
  record(inbox: string, thread: string): Promise<unknown | undefined>;
  /** Ties a thread to its A2A task, or sets the task id of a binding made before the task existed. */
  bindTask(binding: TaskBinding): Promise<void>;
  taskBinding(inbox: string, thread: string): Promise<TaskBinding | undefined>;
  /** Every thread of the inbox carried by a task on another agent's server. */
  clientTasks(inbox: string): Promise<TaskBinding[]>;
}

const TABLES_OF_AN_INBOX = [
  "agreements_messages",
  "agreements_nonces",
  "agreements_threads",
  "agreements_pending",
  "agreements_records",
  "agreements_a2a_tasks",
] as const;

/** The store on a migrated database (run `migrate(handle, [agreementsInboxMigrations])` first). */
export function createSqlInboxStore<DB>(handle: Database<DB>): InboxStore {
  const h = asTables<InboxTables>(handle);
  return {
    ...inboxMethods(h),
    ...messageMethods(h.db),
    ...pendingMethods(h),
    ...recordAndTaskMethods(h.db),
  };
}

type InboxDatabase = Database<InboxTables>;
type InboxDb = InboxDatabase["db"];

const toMessage = (row: InboxTables["agreements_messages"]): StoredMessage => ({
  ...row,
  direction: row.direction as StoredMessage["direction"],
  result: row.result as StoredMessage["result"],
  at: Number(row.at),
});

const toPending = (row: InboxTables["agreements_pending"]): PendingAnswer => ({
  inbox: row.inbox,
  id: row.id,
  thread: row.thread,
  channel: row.channel as Channel,
  draft: JSON.parse(row.draft),
  reasons: JSON.parse(row.reasons) as string[],
  createdAt: Number(row.created_at),
});

const toBinding = (row: InboxTables["agreements_a2a_tasks"]): TaskBinding => ({
  inbox: row.inbox,
  thread: row.thread,
  role: row.role as TaskBinding["role"],
  taskId: row.task_id,
  endpoint: row.endpoint,
});

/** Deletes an inbox and every row it kept, in one transaction. */
async function deleteInboxRows(h: InboxDatabase, address: string): Promise<void> {
  await h.transaction(async (trx) => {
    for (const table of TABLES_OF_AN_INBOX)
      await trx.deleteFrom(table).where("inbox", "=", address).execute();
    await trx.deleteFrom("agreements_inboxes").where("address", "=", address).execute();
  });
}

/** The inboxes themselves, and the receiver's memory of message ids and nonces. */
function inboxMethods(
  h: InboxDatabase,
): Pick<InboxStore, "createInbox" | "getInbox" | "deleteInbox" | "deleteExpired" | "receiverState"> {
  const db = h.db;
  return {
    async createInbox(row) {
      await db
        .insertInto("agreements_inboxes")
        .values({
          address: row.address.toLowerCase(),
          policy: JSON.stringify(row.policy),
          expires_at: row.expiresAt,
          created_at: row.createdAt,
        })
        .execute();
    },
    async getInbox(address) {
      const row = await db
        .selectFrom("agreements_inboxes")
        .selectAll()
        .where("address", "=", address.toLowerCase())
        .executeTakeFirst();
      if (row === undefined) return undefined;
      return {
        address: row.address,
        policy: JSON.parse(row.policy) as LimitsPolicy,
        expiresAt: row.expires_at === null ? null : Number(row.expires_at),
        createdAt: Number(row.created_at),
      };
    },
    deleteInbox: (address) => deleteInboxRows(h, address.toLowerCase()),
    async deleteExpired(now) {
      const rows = await db
        .selectFrom("agreements_inboxes")
        .select("address")
        .where("expires_at", "is not", null)
        .where("expires_at", "<=", now)
        .execute();
      for (const row of rows) await deleteInboxRows(h, row.address);
      return rows.map((r) => r.address);
    },
    receiverState(inbox) {
      return {
        async messageHash(id) {
          const row = await db
            .selectFrom("agreements_messages")
            .select("hash")
            .where("inbox", "=", inbox)
            .where("id", "=", id)
            .executeTakeFirst();
          return row?.hash;
        },
        async claimNonce(sender, nonce, expiresAt) {
          const result = await db
            .insertInto("agreements_nonces")
            .values({ inbox, sender, nonce, expires_at: expiresAt * 1000 })
            .onConflict((oc) => oc.columns(["inbox", "sender", "nonce"]).doNothing())
            .executeTakeFirst();
          return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
        },
      };
    },
  };
}

/** Every message of every thread, and each thread's state. */
function messageMethods(
  db: InboxDb,
): Pick<InboxStore, "saveMessage" | "message" | "thread" | "setThreadState" | "threadState"> {
  return {
    async saveMessage(m) {
      await db
        .insertInto("agreements_messages")
        .values({
          inbox: m.inbox,
          id: m.id,
          thread: m.thread,
          direction: m.direction,
          type: m.type,
          hash: m.hash,
          canonical: m.canonical,
          jws: m.jws,
          result: m.result,
          at: m.at,
        })
        .onConflict((oc) => oc.columns(["inbox", "id"]).doNothing())
        .execute();
    },
    async message(inbox, id) {
      const row = await db
        .selectFrom("agreements_messages")
        .selectAll()
        .where("inbox", "=", inbox)
        .where("id", "=", id)
        .executeTakeFirst();
      return row === undefined ? undefined : toMessage(row);
    },
    async thread(inbox, thread) {
      const rows = await db
        .selectFrom("agreements_messages")
        .selectAll()
        .where("inbox", "=", inbox)
        .where("thread", "=", thread)
        .orderBy("at")
        .execute();
      return rows.map(toMessage);
    },
    async setThreadState(inbox, thread, state, channel, now) {
      await db
        .insertInto("agreements_threads")
        .values({ inbox, thread, state, channel, updated_at: now })
        .onConflict((oc) => oc.columns(["inbox", "thread"]).doUpdateSet({ state, updated_at: now }))
        .execute();
    },
    async threadState(inbox, thread) {
      const row = await db
        .selectFrom("agreements_threads")
        .select(["state", "channel"])
        .where("inbox", "=", inbox)
        .where("thread", "=", thread)
        .executeTakeFirst();
      return row === undefined
        ? undefined
        : { state: row.state as ThreadState, channel: row.channel as Channel };
    },
  };
}

/** The answers waiting for the owner. */
function pendingMethods(h: InboxDatabase): Pick<InboxStore, "addPending" | "pending" | "takePending"> {
  const db = h.db;
  return {
    async addPending(p) {
      await db
        .insertInto("agreements_pending")
        .values({
          inbox: p.inbox,
          id: p.id,
          thread: p.thread,
          channel: p.channel,
          draft: JSON.stringify(p.draft),
          reasons: JSON.stringify(p.reasons),
          created_at: p.createdAt,
        })
        .execute();
    },
    async pending(inbox) {
      const rows = await db
        .selectFrom("agreements_pending")
        .selectAll()
        .where("inbox", "=", inbox)
        .orderBy("created_at")
        .execute();
      return rows.map(toPending);
    },
    async takePending(inbox, id) {
      return h.transaction(async (trx) => {
        const row = await trx
          .selectFrom("agreements_pending")
          .selectAll()
          .where("inbox", "=", inbox)
          .where("id", "=", id)
          .executeTakeFirst();
        if (row === undefined) return undefined;
        await trx.deleteFrom("agreements_pending").where("inbox", "=", inbox).where("id", "=", id).execute();
        return toPending(row);
      });
    },
  };
}

/** Each thread's agreement record and the A2A task that carries it. */
function recordAndTaskMethods(
  db: InboxDb,
): Pick<InboxStore, "saveRecord" | "record" | "bindTask" | "taskBinding" | "clientTasks"> {
  return {
    async saveRecord(inbox, thread, record) {
      await db
        .insertInto("agreements_records")
        .values({ inbox, thread, record: JSON.stringify(record) })
        .onConflict((oc) => oc.columns(["inbox", "thread"]).doUpdateSet({ record: JSON.stringify(record) }))
        .execute();
    },
    async record(inbox, thread) {
      const row = await db
        .selectFrom("agreements_records")
        .select("record")
        .where("inbox", "=", inbox)
        .where("thread", "=", thread)
        .executeTakeFirst();
      return row === undefined ? undefined : JSON.parse(row.record);
    },
    async bindTask(b) {
      await db
        .insertInto("agreements_a2a_tasks")
        .values({ inbox: b.inbox, thread: b.thread, role: b.role, task_id: b.taskId, endpoint: b.endpoint })
        .onConflict((oc) => oc.columns(["inbox", "thread"]).doUpdateSet({ task_id: b.taskId }))
        .execute();
    },
    async taskBinding(inbox, thread) {
      const row = await db
        .selectFrom("agreements_a2a_tasks")
        .selectAll()
        .where("inbox", "=", inbox)
        .where("thread", "=", thread)
        .executeTakeFirst();
      return row === undefined ? undefined : toBinding(row);
    },
    async clientTasks(inbox) {
      const rows = await db
        .selectFrom("agreements_a2a_tasks")
        .selectAll()
        .where("inbox", "=", inbox)
        .where("role", "=", "client")
        .orderBy("thread")
        .execute();
      return rows.map(toBinding);
    },
  };
}
