/**
 * What every push operation shares: the holder's context, the delivery engine, the lease settings
 * and the change listeners. Built once by createPushService; each operation module takes it first.
 */
import type { DeliveryEngine, DeliveryTables } from "@doorbell/delivery";
import { asTables, type Kysely } from "@doorbell/store";
import type { HolderContext } from "../context.js";
import type { HolderTables } from "../model/tables.js";
import type { PushTables } from "./schema.js";
import type { PushOptions } from "./types.js";

/** The tables push reads and writes in one transaction: the holder's, its own and the outbox. */
export type PushDbTables = HolderTables & PushTables & DeliveryTables;
export type PushDb = Kysely<PushDbTables>;
/** The engine's view of the same connection or transaction (Kysely's table types are invariant). */
export const engineDb = (db: PushDb): Kysely<DeliveryTables> => asTables<DeliveryTables>(db);

export const DAY_MS = 24 * 60 * 60 * 1000;

export interface Push {
  readonly ctx: HolderContext;
  readonly engine: DeliveryEngine;
  readonly store: { db: PushDb; transaction<T>(fn: (trx: PushDb) => Promise<T>): Promise<T> };
  readonly leaseMs: number;
  readonly testLeaseMs: number;
  readonly maxPerIntent: number;
  readonly listeners: Set<(ids: readonly string[]) => void>;
}

export function createPush(ctx: HolderContext, options: PushOptions): Push {
  return {
    ctx,
    engine: options.engine,
    store: asTables<PushDbTables>(ctx.store),
    leaseMs: Math.min(options.leaseMs ?? 30 * DAY_MS, 30 * DAY_MS),
    testLeaseMs: options.testLeaseMs ?? 10 * 60_000,
    maxPerIntent: Math.min(options.maxPerIntent ?? 3, 3),
    listeners: new Set(),
  };
}

/** Tells live MCP sessions that these subscriptions changed; a listener's failure never affects the holder. */
export function emit(push: Push, ids: readonly string[]): void {
  if (ids.length === 0) return;
  for (const listener of push.listeners) {
    try {
      listener(ids);
    } catch {
      // A listener is a live MCP session.
    }
  }
}
