/**
 * The ground createHolder stands on: the data directory, the seal keys, the database handle and
 * its migrations, checked against the keys of the other processes on the same database.
 */
import fs from "node:fs";
import path from "node:path";
import { deliveryMigrations } from "@doorbell/delivery";
import { eventsMigrations } from "@doorbell/mcp-events";
import {
  asTables,
  checkSealKeys,
  type Database,
  type LoadedKeyring,
  leadershipMigrations,
  loadKeyring,
  migrate,
  migrationsCurrent,
  notificationMigrations,
  openDatabase,
} from "@doorbell/store";
import { limitsMigrations } from "../limits/index.js";
import type { HolderTables } from "../model/tables.js";
import { oauthMigrations } from "../oauth/index.js";
import { pushMigrations } from "../push/schema.js";
import { holderMigrations } from "./migrations.js";
import type { CreateHolderOptions } from "./options.js";

/** Every package's tables the holder keeps in its one database. */
const HOLDER_SCHEMA = [
  holderMigrations,
  deliveryMigrations,
  pushMigrations,
  oauthMigrations,
  limitsMigrations,
  leadershipMigrations,
  notificationMigrations,
  eventsMigrations,
];

export interface OpenedStore {
  /** The handle as opened; each part that brings its own tables sees them through asTables. */
  readonly handle: Database;
  /** The same handle with the holder's tables. */
  readonly store: Database<HolderTables>;
  readonly keys: LoadedKeyring;
}

/** Opens the database (a SQLite file under the data directory unless a URL is given) and loads the keys. */
export async function openHolderStore(options: CreateHolderOptions, dataDir: string): Promise<OpenedStore> {
  let databaseUrl = options.database;
  if (databaseUrl === undefined) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    databaseUrl = path.join(dataDir, "holder.sqlite");
  }
  const keys = loadKeyring({
    ...(options.keyFile === undefined ? {} : { keyFile: options.keyFile }),
    ...(options.env === undefined ? {} : { env: options.env }),
    dataDir,
  });
  const handle = await openDatabase({ url: databaseUrl });
  return {
    handle,
    store: asTables<HolderTables>(handle),
    keys,
  };
}

/** Runs the migrations; a process whose seal keys differ from the other processes' refuses to start. */
export async function migrateHolderStore(opened: OpenedStore): Promise<void> {
  await migrate(opened.store, HOLDER_SCHEMA);
  await checkSealKeys(opened.handle, opened.keys.keyring);
}

/** Whether every migration the holder knows has run (for /readyz). */
export function holderMigrationsCurrent(opened: OpenedStore): Promise<boolean> {
  return migrationsCurrent(opened.store, HOLDER_SCHEMA);
}
