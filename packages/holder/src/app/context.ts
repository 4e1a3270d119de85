/**
 * What every concern of a holder shares: the context (store, seals, hashers, mailer, config,
 * clock, log), the limits counted across processes, and the one Host allow-list.
 */

import { isLoopbackHost } from "@doorbell/mcp-endpoint";
import { createCodeHasher, createSealer, type Sealer } from "@doorbell/store";
import type { EgressPolicy } from "@doorbell/webhooks";
import type { HolderContext } from "../context.js";
import { createHostAllowList, type HostPolicy } from "../html/host-guard.js";
import { createHolderLimits, type HolderLimits } from "../limits/index.js";
import type { Mailer } from "../mail/mailer.js";
import { holderEgressPolicy } from "./egress.js";
import type { OpenedStore } from "./open.js";
import type { CreateHolderOptions, HolderSettings } from "./options.js";

export function holderSealer(opened: OpenedStore): Sealer {
  return createSealer(opened.keys.keyring);
}

export function holderContext(
  opened: OpenedStore,
  sealer: Sealer,
  mailer: Mailer,
  settings: HolderSettings,
): HolderContext {
  const { keyring } = opened.keys;
  return {
    store: opened.store,
    sealer,
    codes: createCodeHasher(keyring, "holder.codes"),
    contacts: createCodeHasher(keyring, "holder.contacts"),
    mailer,
    config: settings.config,
    clock: settings.clock,
    log: settings.log,
  };
}

/** The limits every process on the database counts together; a failure to count is logged, not fatal. */
export function holderLimits(
  opened: OpenedStore,
  options: CreateHolderOptions,
  settings: HolderSettings,
): HolderLimits {
  return createHolderLimits({
    store: opened.handle,
    hasher: createCodeHasher(opened.keys.keyring, "holder.limits"),
    ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
    ...(options.clientAddressHeader === undefined
      ? {}
      : { clientAddressHeader: options.clientAddressHeader }),
    ...(options.limits === undefined ? {} : { rules: options.limits }),
    onError: (error) =>
      settings.log.warn({ event: "limits.failed", error: error.name }, "a shared limit could not be counted"),
  });
}

/** The Host names the holder answers for, and where it may send requests. */
export interface HolderHosts {
  readonly policy: HostPolicy & { allowedHosts: readonly string[] };
  readonly allowed: (host: string | null | undefined) => boolean;
  /** A fresh egress policy for each part that fetches (doorbells, OAuth clients, key pages). */
  readonly egress: () => EgressPolicy;
}

/**
 * One Host allow-list for the pages, the MCP endpoint and OAuth; loopback names are allowed once
 * the holder listens on loopback (`listening` is told by `listen`).
 */
export function holderHosts(
  options: CreateHolderOptions,
  settings: HolderSettings,
  listening: { onLoopback: boolean },
): HolderHosts {
  const { publicUrl } = settings;
  const publicHost = new URL(publicUrl).hostname.replace(/^\[|\]$/g, "");
  const policy = {
    publicUrl,
    allowedHosts: [...(options.allowedHosts ?? []), ...(options.mcp?.allowedHosts ?? [])],
    loopback: () => isLoopbackHost(publicHost) || listening.onLoopback,
  };
  return {
    policy,
    allowed: createHostAllowList(policy),
    egress: () => holderEgressPolicy(settings.webhookPolicy, publicUrl, policy.allowedHosts),
  };
}
