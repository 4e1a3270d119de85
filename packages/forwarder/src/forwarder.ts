/**
 * A whole forwarder in one call (push profile §7): store (a SQLite file under the data directory
 * by default, or a PostgreSQL URL), migrations (delivery engine, then the forwarder's own), seal
 * keys, the delivery engine towards agents (coalescing off: the holder already coalesced, and §7
 * rule 4 forbids merging, delaying or reordering), its worker, the upstream holder client, the MCP
 * endpoint and the relay endpoint — `{ fetch, listen, close }`.
 */
import fs from "node:fs";
import path from "node:path";
import {
  createDeliveryEngine,
  type DeliveryTables,
  deliveryMigrations,
  type RetryPolicy,
  type Worker,
  type WorkerOptions,
} from "@doorbell/delivery";
import { MCP_PATH, nodeServers } from "@doorbell/mcp-endpoint";
import {
  asTables,
  createSealer,
  type Keyring,
  type LoadedKeyring,
  loadKeyring,
  migrate,
  openDatabase,
} from "@doorbell/store";
import { closeEgress, type EgressPolicy, productionPolicy } from "@doorbell/webhooks";
import { type Logger, pino } from "pino";
import { createForwarderApp } from "./app.js";
import { type ForwarderContext, type ForwarderDb, forwarderHashers } from "./context.js";
import { createEndingSweep } from "./ending-sweep.js";
import { createHolderEnds } from "./holder-ends.js";
import { createForwarderMcp, type ForwarderMcpOptions } from "./mcp-endpoint.js";
import { createRelayEndpoint } from "./relay-endpoint.js";
import { purgeRelays } from "./relays.js";
import { type ForwarderTables, forwarderMigrations } from "./schema.js";
import { createPushSide, type PushSideOptions } from "./subscriptions.js";
import { createUpstream } from "./upstream.js";

export interface CreateForwarderOptions {
  /** The upstream holder's MCP endpoint, e.g. https://intents.example.sk/mcp. */
  upstream: string;
  /** Where the SQLite file and the generated seal-key file live (default `.doorbell-forwarder`). */
  dataDir?: string;
  /** A `postgres://` URL, or a SQLite file (default `<dataDir>/forwarder.sqlite`). */
  database?: string;
  /** The forwarder's public origin: its MCP endpoint and the relay URLs the holder rings. */
  publicUrl?: string;
  /**
   * Where doorbells to agents may go. Default: push profile §6 rule 1 (`productionPolicy`, never
   * the forwarder's own host). `developmentPolicy()` allows loopback, for demos and tests only.
   */
  policy?: EgressPolicy;
  keyFile?: string;
  env?: Record<string, string | undefined>;
  /** An open store to use instead of `database` (the caller closes it), e.g. a test engine's. */
  store?: ForwarderDb;
  /** Seal and hash keys to use instead of loading them (`keyFile`, env, generated file). */
  keyring?: Keyring;
  mcp?: ForwarderMcpOptions;
  push?: PushSideOptions;
  worker?: WorkerOptions;
  /**
   * How often live relays are checked for an agent subscription that ended without the agent
   * (410, delivery-failed, lease), to mark them ended and send the holder the end request for
   * its side (§7 rules 1 and 6; ending-sweep.ts, holder-ends.ts). Default 1000 ms.
   */
  endingSweepMs?: number;
  /** Retry schedule and challenge delays of the engine towards agents, for tests. */
  engine?: { challengeDelaysMs?: readonly number[]; retry?: RetryPolicy };
  clock?: () => number;
  log?: Logger;
}

export interface ForwarderSummary {
  publicUrl: string;
  mcpUrl: string;
  upstream: string;
  database: string;
  dialect: "sqlite" | "postgres";
  /** Where the seal keys came from ("given": the caller passed a keyring). */
  keys: LoadedKeyring["source"] | "given";
  keyFile?: string;
  egress: EgressPolicy["mode"];
}

export interface Forwarder {
  fetch(request: Request): Promise<Response>;
  listen(port?: number, host?: string): Promise<{ port: number; host: string; url: string }>;
  close(): Promise<void>;
  readonly context: ForwarderContext;
  readonly summary: ForwarderSummary;
}

const DEFAULT_PUBLIC_URL = "http://127.0.0.1:8090";
const HOUR_MS = 60 * 60 * 1000;

export async function createForwarder(options: CreateForwarderOptions): Promise<Forwarder> {
  const upstreamUrl = new URL(options.upstream);
  if (upstreamUrl.protocol !== "https:" && upstreamUrl.protocol !== "http:") {
    throw new TypeError("the upstream holder's MCP URL must be http(s)");
  }
  const dataDir = path.resolve(options.dataDir ?? ".doorbell-forwarder");
  const clock = options.clock ?? Date.now;
  const log = options.log ?? pino({ level: "info" });
  const publicUrl = (options.publicUrl ?? DEFAULT_PUBLIC_URL).replace(/\/+$/, "");
  let databaseUrl = options.database;
  if (databaseUrl === undefined && options.store === undefined) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    databaseUrl = path.join(dataDir, "forwarder.sqlite");
  }
  const keys: { keyring: Keyring; source: ForwarderSummary["keys"]; path?: string | undefined } =
    options.keyring !== undefined
      ? { keyring: options.keyring, source: "given" }
      : loadKeyring({
          ...(options.keyFile === undefined ? {} : { keyFile: options.keyFile }),
          ...(options.env === undefined ? {} : { env: options.env }),
          dataDir,
        });
  // Never its own host (rule 1); a development policy is the caller's explicit choice.
  const policy = options.policy ?? productionPolicy({ blockedHosts: [new URL(publicUrl).hostname] });
  const ownStore = options.store === undefined;
  const store =
    options.store ??
    asTables<ForwarderTables & DeliveryTables>(await openDatabase({ url: databaseUrl as string }));
  const upstream = createUpstream(upstreamUrl);
  let worker: Worker | undefined;
  let timer: NodeJS.Timeout | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> | undefined;
  let ending: Promise<unknown> | undefined;
  try {
    await migrate(store, [deliveryMigrations, forwarderMigrations]);
    const sealer = createSealer(keys.keyring);
    const engine = createDeliveryEngine({
      store: asTables<DeliveryTables>(store),
      sealer,
      policy,
      clock,
      coalescing: "off",
      ...(options.engine?.challengeDelaysMs === undefined
        ? {}
        : { challengeDelaysMs: options.engine.challengeDelaysMs }),
      ...(options.engine?.retry === undefined ? {} : { retry: options.engine.retry }),
      logger: log.child({ part: "delivery" }),
    });
    const context: ForwarderContext = {
      store,
      sealer,
      hashers: forwarderHashers(keys.keyring),
      engine,
      upstream,
      policy,
      publicUrl,
      clock,
      log,
    };
    const push = createPushSide(context, options.push);
    const mcp = createForwarderMcp(context, push, options.mcp);
    const app = createForwarderApp(context, mcp, createRelayEndpoint(context));
    worker = engine.worker(options.worker);
    worker.start();
    timer = setInterval(() => {
      purgeRelays(context).catch((error: Error) =>
        log.warn({ event: "forwarder.purge_failed", error: error.name }, error.message.slice(0, 200)),
      );
    }, HOUR_MS);
    timer.unref();
    const sweep = createEndingSweep(context);
    const holderEnds = createHolderEnds(context);
    sweepTimer = setInterval(() => {
      // One pass of each at a time: a slow database must not pile passes up, and end requests
      // waiting on a slow holder must not hold back marking relays ended.
      sweeping ??= sweep()
        .catch((error: Error) =>
          log.warn({ event: "forwarder.sweep_failed", error: error.name }, error.message.slice(0, 200)),
        )
        .finally(() => {
          sweeping = undefined;
        });
      ending ??= holderEnds()
        .catch((error: Error) =>
          log.warn({ event: "forwarder.holder_ends_failed", error: error.name }, error.message.slice(0, 200)),
        )
        .finally(() => {
          ending = undefined;
        });
    }, options.endingSweepMs ?? 1000);
    sweepTimer.unref();

    const servers = nodeServers(app.fetch);
    const started = worker;
    let closing: Promise<void> | undefined;
    return {
      fetch: (request) => Promise.resolve(app.fetch(request)),
      listen: (port = 8090, host = "127.0.0.1") => servers.listen(port, host),
      close() {
        closing ??= (async () => {
          clearInterval(timer);
          clearInterval(sweepTimer);
          await sweeping;
          await ending;
          await mcp.close();
          await servers.close();
          await started.stop();
          await upstream.close();
          await closeEgress(policy);
          if (ownStore) await store.close();
        })();
        return closing;
      },
      context,
      summary: {
        publicUrl,
        mcpUrl: `${publicUrl}${MCP_PATH}`,
        upstream: upstreamUrl.href,
        database: store.description,
        dialect: store.dialect,
        keys: keys.source,
        ...(keys.path === undefined ? {} : { keyFile: keys.path }),
        egress: policy.mode,
      },
    };
  } catch (error) {
    clearInterval(timer);
    clearInterval(sweepTimer);
    await worker?.stop();
    await upstream.close();
    if (ownStore) await store.close();
    throw error;
  }
}

export type { ForwarderTables };
