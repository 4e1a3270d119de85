import type { CodeHasher, Database, Sealer } from "@doorbell/store";
import type { Logger } from "pino";
import { type ConsentTranslations, DEFAULT_CONSENT_TEXT } from "./i18n/consent-texts.js";
import type { Mailer } from "./mail/mailer.js";
import type { HolderTables } from "./model/tables.js";

/** The holder's settings; every default is what `doorbell serve` runs with. */
export interface HolderConfig {
  /** The public origin of the holder's pages and MCP endpoint, e.g. https://intents.example.sk. */
  publicUrl: string;
  /** Shown in the descriptor and the pages. */
  name: string;
  /** Consent-link rule 1: drafts end at most 24 h after publishing. */
  draftTtlMs: number;
  /** How long the double opt-in link works. */
  confirmTtlMs: number;
  /** validUntil when the agent gives none; and the longest allowed. */
  defaultValidityMs: number;
  maxValidityMs: number;
  /** The consent text (the same text as the holder's other channels) and its version. */
  consentText: string;
  consentVersion: string;
  /**
   * The consent text in Slovak and Czech, each with its own version id (never one the English
   * text uses). Without it our own translations are used, but only for the default text.
   */
  consentTranslations?: ConsentTranslations;
  /** Demand summaries withhold cells with fewer active intents than this (k-anonymity). */
  demandThreshold: number;
  /** At most one match digest per intent in this long; DIGEST_WINDOW_MS, 15 min, by default. */
  digestWindowMs?: number;
}

/** Everything the holder's parts share, built once at start-up. */
export interface HolderContext {
  readonly store: Database<HolderTables>;
  readonly sealer: Sealer;
  /** Keyed hashes of intentCodes and page tokens (never stored in clear). */
  readonly codes: CodeHasher;
  /** Keyed hashes of e-mail addresses, for lookups without opening contacts. */
  readonly contacts: CodeHasher;
  readonly mailer: Mailer;
  readonly config: HolderConfig;
  /** Epoch milliseconds. */
  readonly clock: () => number;
  readonly log: Logger;
}

export function defaultConfig(publicUrl: string): HolderConfig {
  const day = 24 * 60 * 60 * 1000;
  return {
    publicUrl: publicUrl.replace(/\/+$/, ""),
    name: "Doorbell intent holder",
    draftTtlMs: day,
    confirmTtlMs: 2 * day,
    defaultValidityMs: 30 * day,
    maxValidityMs: 365 * day,
    consentText: DEFAULT_CONSENT_TEXT,
    consentVersion: "2026-11-30",
    demandThreshold: 5,
  };
}
