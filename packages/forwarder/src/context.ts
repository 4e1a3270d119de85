import type { DeliveryEngine, DeliveryTables } from "@doorbell/delivery";
import {
  asTables,
  type CodeHasher,
  createCodeHasher,
  type Database,
  type Keyring,
  type Kysely,
  type Sealer,
} from "@doorbell/store";
import type { EgressPolicy } from "@doorbell/webhooks";
import type { Logger } from "pino";
import type { ForwarderTables } from "./schema.js";
import type { Upstream } from "./upstream.js";

export type ForwarderDb = Database<ForwarderTables & DeliveryTables>;
/** A query handle or transaction on the forwarder's database (its tables and the engine's). */
export type ForwarderKysely = Kysely<ForwarderTables & DeliveryTables>;

/** The same handle, typed for the delivery engine (store's asTables holds the one cast). */
export const deliveryDb = (db: ForwarderKysely): Kysely<DeliveryTables> => asTables<DeliveryTables>(db);

/** Keyed hashes, one purpose each, so a hash of one kind never matches another kind. */
export interface ForwarderHashers {
  /** Forwarder codes → their intent record. */
  codes: CodeHasher;
  /** Relay paths → their relay record. */
  relayPath: CodeHasher;
  /** Forwarder code → the relays it may renew or end. */
  relayOwner: CodeHasher;
  /** Forwarder code + agent url → the relay a renewal names. */
  relayEndpoint: CodeHasher;
}

export function forwarderHashers(keyring: Keyring): ForwarderHashers {
  return {
    codes: createCodeHasher(keyring, "forwarder.codes"),
    relayPath: createCodeHasher(keyring, "forwarder.relay-path"),
    relayOwner: createCodeHasher(keyring, "forwarder.relay-owner"),
    relayEndpoint: createCodeHasher(keyring, "forwarder.relay-endpoint"),
  };
}

/** Everything the forwarder's parts share, built once by `createForwarder`. */
export interface ForwarderContext {
  readonly store: ForwarderDb;
  readonly sealer: Sealer;
  readonly hashers: ForwarderHashers;
  /** The delivery engine towards agents (coalescing off: the holder already coalesced). */
  readonly engine: DeliveryEngine;
  readonly upstream: Upstream;
  /** Where the forwarder may send: doorbells to agents, and end requests to the holder. */
  readonly policy: EgressPolicy;
  /** The forwarder's public origin: relay endpoints are `<publicUrl>/relay/<path>`. */
  readonly publicUrl: string;
  readonly clock: () => number;
  readonly log: Logger;
}
