/**
 * The holder's limits in one object: who is asking (trust-proxy aware, IPv6 by /64) and one shared
 * limiter over the holder's database with every bucket of rules.ts. Built once by createHolder
 * and handed to the pages, the OAuth server and the MCP endpoint.
 */
import type { CodeHasher, Database } from "@doorbell/store";
import { addressKey, type ClientAddressHeader, createClientAddressResolver } from "./client-address.js";
import { type LimitHint, sharedLimitHint } from "./limit-hints.js";
import { DEFAULT_LIMITS, type LimitBucket } from "./rules.js";
import {
  createSharedLimiter,
  type LimitRule,
  type LimitVerdict,
  type SharedLimiter,
} from "./shared-limiter.js";

export interface HolderLimits {
  /** Counts one call of `key` in `bucket`; `{ ok: false, retryAfterSeconds }` when over the limit. */
  consume(bucket: LimitBucket, key: string, points?: number): Promise<LimitVerdict>;
  /**
   * The limit key of the client behind a request: the TCP peer, or the client a trusted proxy
   * names; IPv6 as its /64. Undefined when the peer is unknown (an in-process request).
   */
  clientKey(
    peer: string | undefined,
    headers: Headers | Record<string, string | string[] | undefined>,
  ): string | undefined;
  readonly rules: Readonly<Record<LimitBucket, LimitRule>>;
  /** How a refusal names `bucket` and what changes it (its rule now, no counts). */
  hint(bucket: LimitBucket): LimitHint;
  readonly limiter: SharedLimiter;
  /** Writes the counts held in memory; the database stays open. */
  close(): Promise<void>;
}

export interface HolderLimitsOptions {
  store: Database;
  /** Keys are stored as keyed hashes (no address or e-mail in clear in the table). */
  hasher: Pick<CodeHasher, "hash">;
  trustProxy?: readonly string[];
  /** The one header the trusted proxies write (default `x-forwarded-for`); the other is ignored. */
  clientAddressHeader?: ClientAddressHeader;
  rules?: Partial<Record<LimitBucket, LimitRule>>;
  clock?: () => number;
  onError?: (error: Error) => void;
}

export function createHolderLimits(options: HolderLimitsOptions): HolderLimits {
  const rules = { ...DEFAULT_LIMITS, ...options.rules } as Record<LimitBucket, LimitRule>;
  const resolve = createClientAddressResolver({
    trustProxy: options.trustProxy ?? [],
    ...(options.clientAddressHeader === undefined ? {} : { header: options.clientAddressHeader }),
  });
  const limiter = createSharedLimiter({
    store: options.store,
    rules,
    hashKey: (key) => options.hasher.hash(key),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });
  return {
    consume: (bucket, key, points) => limiter.consume(bucket, key, points),
    clientKey: (peer, headers) => addressKey(resolve(peer, headers)),
    rules,
    hint: (bucket) => sharedLimitHint(bucket, rules[bucket]),
    limiter,
    close: () => limiter.close(),
  };
}

/** The TCP peer of a request served by @hono/node-server (`c.env`), if any. */
export function peerAddress(env: unknown): string | undefined {
  const incoming = (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress;
}
