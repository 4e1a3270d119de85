import type BetterSqlite3 from "better-sqlite3";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import { StoreError } from "./errors.js";
import { defineMigrations } from "./migrations.js";

/**
 * Notifications between processes on one database, the same on both engines: PostgreSQL has
 * NOTIFY/LISTEN; SQLite has nothing of the kind, and a `doorbell catalogue import` or a second
 * serve process writes the same file. There `notify` appends a row to `store_notifications` (in
 * the caller's transaction, so it is seen with the commit and never without it), and each handle
 * that listens follows the table: every `SQLITE_POLL_MS` it asks `PRAGMA data_version`, which
 * changes only when another connection committed (a read of a page already in memory), and reads
 * the rows after the last one it saw only then. Rows older than a minute are deleted as others
 * are written: a listener reads them within a poll or two.
 */
export const notificationMigrations = defineMigrations("store-notifications", [
  {
    version: 1,
    name: "notifications",
    async up(db, { dialect, types, autoId }) {
      // PostgreSQL carries notifications itself.
      if (dialect !== "sqlite") return;
      await db.schema
        .createTable("store_notifications")
        .$call(autoId("seq"))
        .addColumn("channel", "text", (c) => c.notNull())
        .addColumn("payload", "text", (c) => c.notNull())
        .addColumn("at", types.timestamp, (c) => c.notNull())
        .execute();
    },
  },
]);

/** How often a SQLite listener looks for other connections' commits. */
export const SQLITE_POLL_MS = 25;
/** Notifications kept for listeners that have yet to read them. */
const KEEP_MS = 60_000;
/** A PostgreSQL payload is at most 8000 bytes; SQLite keeps the same bound so both behave alike. */
export const MAX_PAYLOAD_BYTES = 7_999;

const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function checkChannel(channel: string): void {
  if (!CHANNEL_NAME.test(channel)) {
    throw new StoreError("ERR_STORE_CONFIG", "a notification channel is a lower-case SQL identifier");
  }
}

function checkPayload(payload: string): void {
  if (typeof payload !== "string" || Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
    throw new StoreError(
      "ERR_STORE_CONFIG",
      `a notification payload is a string of at most ${MAX_PAYLOAD_BYTES} bytes`,
    );
  }
}

export type Listener = (payload?: string) => void;

/** `pg_notify` in the caller's transaction (or alone): delivered to every listener at commit. */
export async function notifyPostgres(db: Kysely<unknown>, channel: string, payload: string): Promise<void> {
  checkChannel(channel);
  checkPayload(payload);
  await sql`select pg_notify(${channel}, ${payload})`.execute(db);
}

let written = 0;

/** Appends the notification in the caller's transaction; now and then deletes the old ones. */
export async function notifySqlite(
  db: Kysely<unknown>,
  channel: string,
  payload: string,
  now: number,
): Promise<void> {
  checkChannel(channel);
  checkPayload(payload);
  await sql`insert into store_notifications (channel, payload, at) values (${channel}, ${payload}, ${now})`.execute(
    db,
  );
  if (++written % 64 === 0)
    await sql`delete from store_notifications where at < ${now - KEEP_MS}`.execute(db);
}

/**
 * A SQLite handle's listeners. `connection` is the handle's read-only second connection (it sees
 * every commit, this process's too, and never an open transaction); an in-memory database has only
 * the one connection, which `busy` says is inside a transaction.
 */
export class SqliteNotifications {
  readonly #listeners = new Map<string, Set<Listener>>();
  #timer: NodeJS.Timeout | undefined;
  #version: unknown;
  #last = 0;
  #ready = false;
  #after: BetterSqlite3.Statement | undefined;

  constructor(
    private readonly connection: BetterSqlite3.Database,
    private readonly busy: () => boolean,
    private readonly shared: boolean,
  ) {}

  listen(channel: string, listener: Listener): () => Promise<void> {
    checkChannel(channel);
    if (!this.#ready && !this.#start()) return async () => {};
    let set = this.#listeners.get(channel);
    if (!set) {
      set = new Set();
      this.#listeners.set(channel, set);
    }
    set.add(listener);
    return async () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(channel);
      if (this.#listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#ready = false;
  }

  /** Starts following the table from its end; false when the table was never migrated. */
  #start(): boolean {
    const table = this.connection
      .prepare("select 1 from sqlite_master where type = 'table' and name = 'store_notifications'")
      .get();
    if (table === undefined) return false;
    const row = this.connection.prepare("select max(seq) as seq from store_notifications").get() as {
      seq: bigint | number | null;
    };
    this.#last = Number(row.seq ?? 0);
    this.#version = this.#dataVersion();
    this.#timer = setInterval(() => this.#poll(), SQLITE_POLL_MS);
    this.#timer.unref();
    this.#ready = true;
    return true;
  }

  #dataVersion(): unknown {
    return this.shared ? this.connection.pragma("data_version", { simple: true }) : undefined;
  }

  #poll(): void {
    if (this.busy()) return;
    try {
      if (this.shared) {
        const version = this.#dataVersion();
        if (version === this.#version) return;
        this.#version = version;
      }
      this.#after ??= this.connection.prepare(
        "select seq, channel, payload from store_notifications where seq > ? order by seq limit 1000",
      );
      const rows = this.#after.all(this.#last) as {
        seq: bigint | number;
        channel: string;
        payload: string;
      }[];
      for (const row of rows) {
        this.#last = Number(row.seq);
        for (const listener of [...(this.#listeners.get(row.channel) ?? [])]) {
          try {
            listener(row.payload === "" ? undefined : row.payload);
          } catch {
            // One listener's failure is its own: the others still hear.
          }
        }
      }
      // More than one read holds: look again at the next poll whatever the version says.
      if (rows.length === 1000) this.#version = undefined;
    } catch {
      // A locked or closing database: the next poll tries again.
    }
  }
}

/**
 * A PostgreSQL handle's listeners, on ONE connection of its own whatever the number of channels
 * (LISTEN holds a connection for as long as it listens, so one per channel would multiply a
 * process's idle connections). After the connection is lost every listener is called without a
 * payload, reconnection is tried every second, and once it listens again every listener is called
 * without a payload once more: what was sent meanwhile was missed.
 */
export class PostgresNotifications {
  readonly #listeners = new Map<string, Set<Listener>>();
  /** Channels LISTENed on the current connection. */
  readonly #listening = new Set<string>();
  #client: pg.Client | undefined;
  #connecting: Promise<pg.Client> | undefined;
  #retry: NodeJS.Timeout | undefined;
  #lost = false;
  #stopped = false;

  constructor(private readonly url: string) {}

  async listen(channel: string, listener: Listener): Promise<() => Promise<void>> {
    checkChannel(channel);
    this.#stopped = false;
    let set = this.#listeners.get(channel);
    if (!set) {
      set = new Set();
      this.#listeners.set(channel, set);
    }
    set.add(listener);
    const forget = async () => {
      set.delete(listener);
      if (set.size > 0 || this.#listeners.get(channel) !== set) return;
      this.#listeners.delete(channel);
      if (this.#listeners.size === 0) return this.stop();
      this.#listening.delete(channel);
      await this.#client?.query(`unlisten ${channel}`).catch(() => {});
    };
    try {
      const client = await this.#connected();
      if (!this.#listening.has(channel)) {
        await client.query(`listen ${channel}`);
        this.#listening.add(channel);
      }
    } catch (error) {
      // Lost again while reconnecting: the retry listens to it with the others.
      if (!this.#lost) {
        await forget();
        throw error;
      }
    }
    return forget;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    const client = this.#client;
    this.#client = undefined;
    this.#listening.clear();
    await client?.end().catch(() => {});
  }

  #connected(): Promise<pg.Client> {
    if (this.#client) return Promise.resolve(this.#client);
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url });
    client.on("notification", (message) => {
      const payload = message.payload === "" ? undefined : message.payload;
      this.#tell(this.#listeners.get(message.channel), payload);
    });
    client.on("error", () => this.#lose(client));
    await client.connect();
    for (const channel of this.#listeners.keys()) {
      await client.query(`listen ${channel}`);
      this.#listening.add(channel);
    }
    this.#client = client;
    if (this.#lost) {
      this.#lost = false;
      this.#tellAll();
    }
    return client;
  }

  #lose(client: pg.Client): void {
    client.end().catch(() => {});
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#listening.clear();
    this.#lost = true;
    this.#tellAll();
    this.#reconnect();
  }

  #reconnect(): void {
    clearTimeout(this.#retry);
    if (this.#stopped || this.#listeners.size === 0) return;
    this.#retry = setTimeout(() => {
      this.#connected().catch(() => this.#reconnect());
    }, 1_000);
  }

  #tellAll(): void {
    for (const set of this.#listeners.values()) this.#tell(set, undefined);
  }

  #tell(set: Set<Listener> | undefined, payload: string | undefined): void {
    for (const listener of [...(set ?? [])]) {
      try {
        listener(payload);
      } catch {
        // One listener's failure is its own: the others still hear.
      }
    }
  }
}
