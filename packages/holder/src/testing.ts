/**
 * Test helpers for this package's own tests (not exported from src/index.ts): a HolderContext on a
 * store handle in one line, a fake clock and the captured log lines.
 *
 *     const ctx = await createTestHolderContext(engine.db, clock.now);
 */
import { Writable } from "node:stream";
import { clearDeliveries, type DeliveryTables, deliveryMigrations } from "@doorbell/delivery";
import {
  asTables,
  createCodeHasher,
  createSealer,
  type Database,
  generateKeyEntry,
  Keyring,
  migrate,
} from "@doorbell/store";
import { pino } from "pino";
import { holderMigrations } from "./app/migrations.js";
import { defaultConfig, type HolderConfig, type HolderContext } from "./context.js";
import { createLocalMailbox, type LocalMailbox } from "./mail/local-mailbox.js";
import type { HolderTables } from "./model/tables.js";
import { type PushTables, pushMigrations } from "./push/schema.js";

export const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** A clock the test moves by hand (`now` is a bound function: pass it as the context's clock). */
export function fakeClock(start = T0) {
  let current = start;
  return {
    now: () => current,
    advance: (ms: number) => (current += ms),
    set: (at: number) => (current = at),
  };
}

// One keyring per test process: every context built on the same database opens every sealed value
// and finds every keyed hash, whichever test built it.
const keyring = new Keyring([generateKeyEntry()]);

export interface TestHolderContext extends HolderContext {
  readonly mailer: LocalMailbox;
  readonly mailbox: LocalMailbox;
  /** Every log line written through `log` (pino JSON, level trace), in order. */
  readonly logLines: string[];
  readonly keyring: Keyring;
}

export interface TestHolderContextOptions {
  /** Overrides of `defaultConfig("http://127.0.0.1:0")`. */
  config?: Partial<HolderConfig>;
  /** Delete every holder row first (intents, offers, matches, mail), for a clean slate. */
  reset?: boolean;
}

/**
 * A HolderContext on `db`: holder migrations applied, a generated keyring (sealer, intent-code and
 * contact hashers), the local mailbox as mailer, `defaultConfig("http://127.0.0.1:0")`, a trace
 * logger whose lines are kept in `logLines`. `clock` defaults to `Date.now`.
 */
export async function createTestHolderContext(
  db: Database,
  clock: () => number = Date.now,
  options: TestHolderContextOptions = {},
): Promise<TestHolderContext> {
  await migrate(db, [holderMigrations, deliveryMigrations, pushMigrations]);
  const store = asTables<HolderTables>(db);
  if (options.reset) {
    await asTables<PushTables>(db).db.deleteFrom("holder_push").execute();
    await clearDeliveries(asTables<DeliveryTables>(db).db);
    await store.db.deleteFrom("holder_offers").execute();
    await store.db.deleteFrom("holder_intents").execute();
    await store.db.deleteFrom("holder_mail").execute();
  }
  const sealer = createSealer(keyring);
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      logLines.push(
        ...String(chunk)
          .split("\n")
          .filter((line) => line !== ""),
      );
      callback();
    },
  });
  const log = pino({ level: "trace", base: null }, sink);
  const mailbox = createLocalMailbox({ store, sealer, clock });
  return {
    store,
    sealer,
    codes: createCodeHasher(keyring, "holder.codes"),
    contacts: createCodeHasher(keyring, "holder.contacts"),
    mailer: mailbox,
    mailbox,
    config: { ...defaultConfig("http://127.0.0.1:0"), ...options.config },
    clock,
    log,
    logLines,
    keyring,
  };
}
