/**
 * Intents: publish a draft (consent-link rule 1), find the intent an intentCode stands for
 * (rules 2 and 4), read, update, withdraw and expire. Codes and page tokens are stored only as
 * keyed hashes (`ctx.codes`), the hidden limit and the contact only sealed (`ctx.sealer`) and bound
 * to the intent's id. No method returns a contact, a hidden limit or a token; `publish` returns
 * the new intentCode once.
 */
import { randomBytes } from "node:crypto";
import type { Selectable, Transaction } from "@doorbell/store";
import type { HolderContext } from "../context.js";
import type { MailMessage } from "../mail/mailer.js";
import { withdrawnMail } from "../mail/templates.js";
import { lastArrival } from "../matching/reader.js";
import { SCOPE_MANAGE, SCOPE_READ } from "../oauth/scopes.js";
import { FRESH_MATCHING_STATE, type HolderTables, type IntentRow } from "../schema.js";
import type { IntentChanges, IntentService } from "./services.js";
import {
  type Area,
  type Category,
  type Country,
  type Criteria,
  type Currency,
  HolderError,
  type Intent,
  type IntentStatus,
  type Money,
  type Principal,
  type PublishInput,
  type PublishResult,
  type Visibility,
} from "./types.js";

/** Why an intent that had been active stopped. */
export type EndReason = "withdrawn" | "expired";

/**
 * Called after the transaction that made the change has committed. A hook's failure is logged
 * and never undoes or fails the change (the matching engine catches up on its next run).
 */
export interface IntentHooks {
  /** An intent became active (double opt-in confirmed): match it against current offers. */
  onActivated(intentId: string): void | Promise<void>;
  /** An active intent ended: stop matching and delivering for it. Not called for drafts. */
  onEnded(intentId: string, reason: EndReason): void | Promise<void>;
  /** An active intent's statement, criteria, budget, limit or buyBy changed (OAuth update). */
  onChanged?(intentId: string): void | Promise<void>;
}

export const noIntentHooks: IntentHooks = { onActivated() {}, onEnded() {} };

export type OAuthPrincipal = Extract<Principal, { kind: "oauth" }>;

export interface IntentServiceOptions {
  /**
   * Whether an OAuth principal may act on an intent (issue #8: the intent was published by that
   * person through that client; see oauth/owners.ts). Without it every OAuth principal is refused.
   */
  oauthAccess?: (principal: OAuthPrincipal, intentId: string) => boolean | Promise<boolean>;
  /**
   * Publishing for a signed-in person (issue #8): their verified address (the intent's contact)
   * and recording who owns the new intent, in the same transaction. Without it an OAuth principal
   * cannot publish.
   */
  oauthPublish?: {
    contactOf(principal: OAuthPrincipal): Promise<{ email: string; contactHash: string } | undefined>;
    recordOwner(trx: Transaction<HolderTables>, intentId: string, principal: OAuthPrincipal): Promise<void>;
    /** After commit: tell the person (their manage link); failures are logged, never undo. */
    published?(intent: Intent, email: string, manageUrl: string): Promise<void>;
  };
}

/** The scopes of issue #8's tokens: reading, and publishing/changing/withdrawing. */

function requireScope(principal: OAuthPrincipal, scope: string): void {
  if (!(principal.scopes ?? []).includes(scope)) {
    throw new HolderError(
      "ERR_HOLDER_FORBIDDEN",
      `this needs the ${scope} scope, which the person did not grant to this assistant`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Random codes and tokens

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` uniformly random base62 characters (~5.95 bits each), from `crypto.randomBytes`. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length)) {
      // 248 = 4 × 62: dropping larger bytes keeps every character equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** 32 base62 characters: ~190 random bits (rule 2 asks for at least 128). */
export const CODE_CHARS = 32;
export const INTENT_CODE_PREFIX = "ic_";
const INTENT_CODE = /^ic_[0-9A-Za-z]{32,64}$/;
/** A page token (consent, confirm, manage): base62, nothing else, so it survives any URL or mail. */
export const PAGE_TOKEN = /^[0-9A-Za-z]{32,64}$/;

export const newIntentCode = (): string => INTENT_CODE_PREFIX + randomBase62(CODE_CHARS);
export const newPageToken = (): string => randomBase62(CODE_CHARS);
const newIntentId = (): string => `int_${randomBase62(20)}`;
const newPseudonym = (): string => `buyer-${randomBase62(10).toLowerCase()}`;

/**
 * A consent token hash once consent has been given (rule 3): the link can no longer give consent
 * (lookups for consent match only the bare hash), but the page can still say "already taken".
 */
export const TAKEN_PREFIX = "taken.";

// ---------------------------------------------------------------------------------------------
// Sealed values, bound to the intent's id

export const hiddenLimitAad = (intentId: string): string => `holder.intent.hidden_limit:${intentId}`;
export const contactAad = (intentId: string): string => `holder.intent.contact:${intentId}`;

/** The sealed hidden limit: the amount and its currency (the budget's, else the country's). */
export interface HiddenLimit {
  amount: number;
  currency: Currency;
}

export function sealHiddenLimit(
  ctx: Pick<HolderContext, "sealer">,
  intentId: string,
  limit: HiddenLimit,
): string {
  return ctx.sealer.seal(
    JSON.stringify({ amount: limit.amount, currency: limit.currency }),
    hiddenLimitAad(intentId),
  );
}

/** For the matching engine only: opens `hidden_limit_sealed`. Never put the result in a result, log or mail. */
export function openHiddenLimit(
  ctx: Pick<HolderContext, "sealer">,
  intentId: string,
  sealed: string,
): HiddenLimit {
  const value = JSON.parse(ctx.sealer.openText(sealed, hiddenLimitAad(intentId))) as HiddenLimit;
  return { amount: value.amount, currency: value.currency };
}

/**
 * What `contact_sealed` holds: the person's e-mail and the manage token of the links in their
 * mails. The token is also stored as a keyed hash (for lookups); this sealed copy exists only so
 * later mails (digests, the withdrawn notice) can carry the same manage link. Both are erased when
 * the intent ends.
 */
export interface SealedContact {
  email: string;
  manageToken: string;
}

export function sealContact(
  ctx: Pick<HolderContext, "sealer">,
  intentId: string,
  contact: SealedContact,
): string {
  return ctx.sealer.seal(
    JSON.stringify({ email: contact.email, manageToken: contact.manageToken }),
    contactAad(intentId),
  );
}

export function openContact(
  ctx: Pick<HolderContext, "sealer">,
  intentId: string,
  sealed: string,
): SealedContact {
  const value = JSON.parse(ctx.sealer.openText(sealed, contactAad(intentId))) as SealedContact;
  return { email: value.email, manageToken: value.manageToken };
}

export const manageUrl = (ctx: Pick<HolderContext, "config">, token: string): string =>
  `${ctx.config.publicUrl}/manage/${token}`;

// ---------------------------------------------------------------------------------------------
// Input validation (the MCP layer checks shapes first; this is the domain's own, precise check)

const invalid = (message: string): HolderError => new HolderError("ERR_HOLDER_INVALID", message);

export const STATEMENT_MAX = 2000;
const COUNTRIES: readonly Country[] = ["SK", "CZ"];
const CATEGORIES: readonly Category[] = ["vehicles", "property"];
const CURRENCIES: readonly Currency[] = ["EUR", "CZK"];
const FUELS = ["petrol", "diesel", "hybrid", "electric", "lpg"] as const;
const KINDS = ["flat", "house", "land"] as const;
const VISIBILITIES: readonly Visibility[] = ["private", "pseudonymous"];

/** The regions (ISO 3166-2 first-level subdivisions) a buyer may narrow an area to. */
export const REGIONS: Readonly<Record<Country, readonly string[]>> = {
  SK: ["SK-BC", "SK-BL", "SK-KI", "SK-NI", "SK-PV", "SK-TA", "SK-TC", "SK-ZI"],
  CZ: [
    "CZ-10",
    "CZ-20",
    "CZ-31",
    "CZ-32",
    "CZ-41",
    "CZ-42",
    "CZ-51",
    "CZ-52",
    "CZ-53",
    "CZ-63",
    "CZ-64",
    "CZ-71",
    "CZ-72",
    "CZ-80",
  ],
};

/** The currency a hidden limit is in when the intent has no budget. */
export const COUNTRY_CURRENCY: Readonly<Record<Country, Currency>> = { SK: "EUR", CZ: "CZK" };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function onlyKeys(value: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw invalid(`${where} has no field "${key.slice(0, 40)}"; allowed fields: ${allowed.join(", ")}`);
    }
  }
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string): T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw invalid(`${field} must be one of ${allowed.join(", ")}`);
  }
  return value as T;
}

function integerIn(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(`${field} must be a whole number from ${min} to ${max}`);
  }
  return value;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

function text(value: unknown, field: string, min: number, max: number): string {
  if (typeof value !== "string") throw invalid(`${field} must be a string of ${min} to ${max} characters`);
  const trimmed = value.trim();
  const length = [...trimmed].length;
  if (length < min || length > max) {
    throw invalid(`${field} must be ${min} to ${max} characters (it has ${length} after trimming spaces)`);
  }
  if (CONTROL.test(trimmed)) throw invalid(`${field} must not contain control characters`);
  return trimmed;
}

export function validateStatement(value: unknown): string {
  return text(value, "statement", 1, STATEMENT_MAX);
}

export function validateArea(value: unknown): Area {
  if (!isRecord(value)) throw invalid('area must be an object like { "country": "SK", "region": "SK-BL" }');
  onlyKeys(value, ["country", "region"], "area");
  const country = oneOf(value.country, COUNTRIES, "area.country");
  if (value.region === undefined) return { country };
  const regions = REGIONS[country];
  if (typeof value.region !== "string" || !regions.includes(value.region)) {
    throw invalid(
      `area.region must be an ISO 3166-2 region code of ${country}, e.g. ${regions[1]} (one of ${regions.join(", ")})`,
    );
  }
  return { country, region: value.region };
}

const MONEY_MAX = 1_000_000_000_000;

export function validateBudget(value: unknown): Money {
  if (!isRecord(value)) throw invalid('budget must be an object like { "amount": 15000, "currency": "EUR" }');
  onlyKeys(value, ["amount", "currency"], "budget");
  const amount = integerIn(value.amount, "budget.amount", 1, MONEY_MAX);
  const currency = oneOf(value.currency, CURRENCIES, "budget.currency");
  return { amount, currency };
}

/** Never echoes the value: a refused limit is still the buyer's secret. */
export function validateHiddenLimit(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > MONEY_MAX) {
    throw invalid(`hiddenLimit must be a positive number (at most ${MONEY_MAX}) in the budget's currency`);
  }
  return value;
}

const VEHICLE_FIELDS = ["make", "model", "yearMin", "mileageMaxKm", "fuel"] as const;
const PROPERTY_FIELDS = ["kind", "roomsMin", "areaMinM2"] as const;

export function validateCriteria(value: unknown, now: number): Criteria {
  if (!isRecord(value))
    throw invalid('criteria must be an object with a category, e.g. { "category": "vehicles" }');
  const category = oneOf(value.category, CATEGORIES, "criteria.category");
  const own: readonly string[] = category === "vehicles" ? VEHICLE_FIELDS : PROPERTY_FIELDS;
  for (const key of Object.keys(value)) {
    if (key === "category" || own.includes(key)) continue;
    const other = category === "vehicles" ? PROPERTY_FIELDS : VEHICLE_FIELDS;
    if ((other as readonly string[]).includes(key)) {
      throw invalid(
        `criteria.${key} applies to ${category === "vehicles" ? "property" : "vehicles"}, not ${category}`,
      );
    }
    throw invalid(
      `criteria has no field "${key.slice(0, 40)}"; fields for ${category}: category, ${own.join(", ")}`,
    );
  }
  const criteria: Criteria = { category };
  if (category === "vehicles") {
    if (value.make !== undefined) criteria.make = text(value.make, "criteria.make", 1, 60);
    if (value.model !== undefined) criteria.model = text(value.model, "criteria.model", 1, 60);
    if (value.yearMin !== undefined) {
      criteria.yearMin = integerIn(
        value.yearMin,
        "criteria.yearMin",
        1900,
        new Date(now).getUTCFullYear() + 1,
      );
    }
    if (value.mileageMaxKm !== undefined) {
      criteria.mileageMaxKm = integerIn(value.mileageMaxKm, "criteria.mileageMaxKm", 0, 2_000_000);
    }
    if (value.fuel !== undefined) criteria.fuel = oneOf(value.fuel, FUELS, "criteria.fuel");
  } else {
    if (value.kind !== undefined) criteria.kind = oneOf(value.kind, KINDS, "criteria.kind");
    if (value.roomsMin !== undefined)
      criteria.roomsMin = integerIn(value.roomsMin, "criteria.roomsMin", 1, 20);
    if (value.areaMinM2 !== undefined) {
      const area = value.areaMinM2;
      if (typeof area !== "number" || !Number.isFinite(area) || area <= 0 || area > 1_000_000) {
        throw invalid("criteria.areaMinM2 must be a positive number of square metres (at most 1000000)");
      }
      criteria.areaMinM2 = area;
    }
  }
  return criteria;
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * An ISO 8601 instant: a date-time with `Z` or an offset, or a calendar date (taken as the end
 * of that day, UTC). Returns epoch milliseconds; refuses impossible dates such as 2027-02-30.
 */
export function parseIsoInstant(value: unknown, field: string): number {
  const shape = `${field} must be an ISO 8601 date (2027-03-31) or date-time with a time zone (2027-03-31T18:00:00Z)`;
  if (typeof value !== "string" || value.length > 40) throw invalid(shape);
  const date = DATE_ONLY.exec(value);
  if (date !== null) {
    const [y, m, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const start = Date.UTC(y, m - 1, d);
    const check = new Date(start);
    if (check.getUTCFullYear() !== y || check.getUTCMonth() !== m - 1 || check.getUTCDate() !== d) {
      throw invalid(`${field} is not a real calendar date`);
    }
    return start + 24 * 60 * 60 * 1000 - 1;
  }
  const dt = DATE_TIME.exec(value);
  if (dt === null) throw invalid(shape);
  const [y, mo, d, h, mi, s] = [dt[1], dt[2], dt[3], dt[4], dt[5], dt[6] ?? "0"].map(Number) as number[];
  const naive = new Date(
    Date.UTC(y as number, (mo as number) - 1, d as number, h as number, mi as number, s as number),
  );
  if (
    naive.getUTCFullYear() !== y ||
    naive.getUTCMonth() !== (mo as number) - 1 ||
    naive.getUTCDate() !== d ||
    naive.getUTCHours() !== h ||
    naive.getUTCMinutes() !== mi ||
    naive.getUTCSeconds() !== s
  ) {
    throw invalid(`${field} is not a real calendar date and time`);
  }
  const parsed = Date.parse(value.toUpperCase());
  if (!Number.isFinite(parsed)) throw invalid(shape);
  return parsed;
}

function futureInstant(value: unknown, field: string, now: number): number {
  const at = parseIsoInstant(value, field);
  if (at <= now) throw invalid(`${field} must be in the future`);
  return at;
}

const PUBLISH_FIELDS = [
  "statement",
  "criteria",
  "area",
  "budget",
  "hiddenLimit",
  "buyBy",
  "validUntil",
  "visibility",
];

export interface ValidPublish {
  statement: string;
  criteria?: Criteria;
  area: Area;
  budget?: Money;
  hiddenLimit?: HiddenLimit;
  buyBy?: number;
  validUntil: number;
  visibility: Visibility;
}

/** The columns a published intent takes from what the agent sent, the hidden limit sealed. */
function publishedColumns(ctx: Pick<HolderContext, "sealer">, id: string, valid: ValidPublish) {
  return {
    statement: valid.statement,
    criteria_json: valid.criteria === undefined ? null : JSON.stringify(valid.criteria),
    category: valid.criteria?.category ?? null,
    country: valid.area.country,
    region: valid.area.region ?? null,
    budget_amount: valid.budget?.amount ?? null,
    budget_currency: valid.budget?.currency ?? null,
    hidden_limit_sealed: valid.hiddenLimit === undefined ? null : sealHiddenLimit(ctx, id, valid.hiddenLimit),
    buy_by: valid.buyBy ?? null,
    valid_until: valid.validUntil,
    visibility: valid.visibility,
    pseudonym: valid.visibility === "pseudonymous" ? newPseudonym() : null,
  };
}

/** Consent-link rule 1: publish takes no contact field; anything undeclared is refused. */
export function validatePublish(input: unknown, now: number, config: HolderContext["config"]): ValidPublish {
  if (!isRecord(input)) throw invalid("the intent must be an object with at least a statement and an area");
  for (const key of Object.keys(input)) {
    if (!PUBLISH_FIELDS.includes(key)) {
      const contact = /mail|phone|name|contact|address/i.test(key)
        ? " (an intent takes no contact data: the person gives it on the holder's consent page)"
        : "";
      throw invalid(
        `the intent has no field "${key.slice(0, 40)}"${contact}; allowed fields: ${PUBLISH_FIELDS.join(", ")}`,
      );
    }
  }
  const statement = validateStatement(input.statement);
  const area = validateArea(input.area);
  const out: ValidPublish = {
    statement,
    area,
    validUntil: now + config.defaultValidityMs,
    visibility: "private",
  };
  if (input.criteria !== undefined) out.criteria = validateCriteria(input.criteria, now);
  if (input.budget !== undefined) out.budget = validateBudget(input.budget);
  if (input.hiddenLimit !== undefined) {
    out.hiddenLimit = {
      amount: validateHiddenLimit(input.hiddenLimit),
      currency: out.budget?.currency ?? COUNTRY_CURRENCY[area.country],
    };
  }
  if (input.validUntil !== undefined) {
    out.validUntil = futureInstant(input.validUntil, "validUntil", now);
    if (out.validUntil > now + config.maxValidityMs) {
      throw invalid(
        `validUntil must be at most ${Math.floor(config.maxValidityMs / 86_400_000)} days from now`,
      );
    }
  }
  if (input.buyBy !== undefined) out.buyBy = futureInstant(input.buyBy, "buyBy", now);
  if (input.visibility !== undefined) out.visibility = oneOf(input.visibility, VISIBILITIES, "visibility");
  return out;
}

// ---------------------------------------------------------------------------------------------
// Rows and what tools and pages see of them

export type IntentRecord = Selectable<IntentRow>;

const iso = (ms: number): string => new Date(ms).toISOString();

/** The status as of `now`: a draft, confirmation or intent past its end reads as expired before `expireDue` runs. */
export function effectiveStatus(row: IntentRecord, now: number): IntentStatus {
  switch (row.status) {
    case "awaiting_consent":
      return row.draft_expires_at !== null && row.draft_expires_at <= now ? "expired" : row.status;
    case "awaiting_email_confirmation":
      return row.confirm_expires_at !== null && row.confirm_expires_at <= now ? "expired" : row.status;
    case "active":
      return row.valid_until <= now ? "expired" : row.status;
    default:
      return row.status;
  }
}

/** What a tool or page may show: never the contact, the hidden limit (only whether one is set) or a token. */
export function intentFromRow(row: IntentRecord, now: number): Intent {
  const status = effectiveStatus(row, now);
  const area: Area = { country: row.country };
  if (row.region !== null) area.region = row.region;
  const intent: Intent = {
    id: row.id,
    status,
    statement: row.statement,
    area,
    hasHiddenLimit: row.hidden_limit_sealed !== null,
    validUntil: iso(row.valid_until),
    visibility: row.visibility,
    createdAt: iso(row.created_at),
  };
  if (row.criteria_json !== null) intent.criteria = JSON.parse(row.criteria_json) as Criteria;
  if (row.budget_amount !== null && row.budget_currency !== null) {
    intent.budget = { amount: row.budget_amount, currency: row.budget_currency };
  }
  if (row.buy_by !== null) intent.buyBy = iso(row.buy_by);
  if (status === "awaiting_consent" && row.draft_expires_at !== null)
    intent.draftExpiresAt = iso(row.draft_expires_at);
  return intent;
}

type HashColumn = "code_hash" | "consent_token_hash" | "confirm_token_hash" | "manage_token_hash";

/**
 * The row whose `column` holds the keyed hash of `token` (one candidate per key in the keyring),
 * confirmed with a constant-time compare. The index finds the row; the token is never compared
 * in clear.
 */
export async function findByToken(
  ctx: HolderContext,
  column: HashColumn,
  token: string,
  trx?: Transaction<HolderTables>,
): Promise<{ row: IntentRecord; hash: string } | undefined> {
  const candidates = ctx.codes.lookupHashes(token);
  const rows = await (trx ?? ctx.store.db)
    .selectFrom("holder_intents")
    .selectAll()
    .where(column, "in", candidates)
    .execute();
  for (const row of rows) {
    const stored = row[column];
    if (stored !== null && ctx.codes.verify(token, stored)) return { row, hash: stored };
  }
  return undefined;
}

/** Calls a hook after commit; its failure is logged (without secrets) and swallowed. */
export async function runHook(
  ctx: HolderContext,
  name: string,
  intentId: string,
  call: () => unknown,
): Promise<void> {
  try {
    await call();
  } catch (error) {
    ctx.log.error(
      {
        event: "intent.hook_failed",
        hook: name,
        intentId,
        errorName: error instanceof Error ? error.name : typeof error,
      },
      "an intent hook failed after commit",
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Ending an intent (withdraw, expiry) — shared with the manage page

export interface EndedIntent {
  row: IntentRecord;
  /** True when this call made the change (false: it had already ended). */
  changed: boolean;
}

/**
 * Withdraws intent `id` at once (binding: MUST take effect immediately) and idempotently. The
 * sealed contact is erased in the same transaction; a person with a verified channel gets the
 * withdrawn notice after commit, and `onEnded` runs if the intent had been active. An intent
 * that already expired stays expired (`changed` false, status expired).
 */
export async function withdrawIntent(
  ctx: HolderContext,
  hooks: IntentHooks,
  id: string,
): Promise<EndedIntent> {
  const now = ctx.clock();
  const result = await ctx.store.transaction(async (trx) => {
    const row = await trx.selectFrom("holder_intents").selectAll().where("id", "=", id).executeTakeFirst();
    if (row === undefined) throw new HolderError("ERR_HOLDER_NOT_FOUND", "there is no such intent");
    const status = effectiveStatus(row, now);
    if (status === "withdrawn" || status === "expired") {
      return { row: { ...row, status }, changed: false, wasActive: false, contact: undefined };
    }
    // Takes effect at once: no offer entering matching after this one reaches the intent.
    const { seq: endedSeq } = await lastArrival(trx, ctx.store.dialect);
    const withdrawn = {
      status: "withdrawn",
      ended_at: now,
      ended_seq: endedSeq,
      updated_at: now,
      contact_sealed: null,
      contact_hash: null,
    } as const;
    const updated = await trx
      .updateTable("holder_intents")
      .set(withdrawn)
      .where("id", "=", id)
      .where("status", "=", row.status)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) !== 1) {
      throw new HolderError("ERR_HOLDER_CONFLICT", "the intent changed at the same time; try again");
    }
    // Only a verified channel gets the notice: an unconfirmed address is never mailed again.
    const contact =
      row.confirmed_at !== null && row.contact_sealed !== null
        ? openContact(ctx, id, row.contact_sealed)
        : undefined;
    const after: IntentRecord = { ...row, ...withdrawn };
    return { row: after, changed: true, wasActive: row.status === "active", contact };
  });
  if (result.changed) {
    ctx.log.info({ event: "intent.withdrawn", intentId: id }, "intent withdrawn");
    if (result.wasActive) await runHook(ctx, "onEnded", id, () => hooks.onEnded(id, "withdrawn"));
    if (result.contact !== undefined) {
      const mail = withdrawnMail({
        holderName: ctx.config.name,
        statement: result.row.statement,
        manageUrl: manageUrl(ctx, result.contact.manageToken),
        withdrawnAt: iso(now),
      });
      await sendQuietly(ctx, { to: result.contact.email, ...mail }, "withdrawn_notice", id);
    }
  }
  return { row: result.row, changed: result.changed };
}

/** Sends a mail whose failure must not undo what already happened; logs only the kind and the intent id. */
export async function sendQuietly(
  ctx: HolderContext,
  message: MailMessage,
  kind: string,
  intentId: string,
): Promise<boolean> {
  try {
    await ctx.mailer.send(message);
    ctx.log.info({ event: "mail.sent", kind, intentId }, "e-mail sent");
    return true;
  } catch {
    ctx.log.warn({ event: "mail.failed", kind, intentId }, "an e-mail could not be sent");
    return false;
  }
}

/** How many rows `expireDue` changes per statement. */
const EXPIRE_BATCH = 500;

// ---------------------------------------------------------------------------------------------
// The service

/** Consented intent codes remembered per process (keyed hashes only, never the codes). */
const CODE_CACHE_SIZE = 10_000;

export function createIntentService(
  ctx: HolderContext,
  hooks: IntentHooks = noIntentHooks,
  options: IntentServiceOptions = {},
): IntentService {
  const draftTtl = Math.min(ctx.config.draftTtlMs, 24 * 60 * 60 * 1000);

  // Once consent is given a code names its intent for good (rule 4: it can still read a withdrawn
  // or expired intent), so the keyed hash → id mapping is safe to keep; drafts are never cached
  // because their codes die with the draft. Bounded: the oldest entry goes first.
  const consentedCodes = new Map<string, string>();
  const remember = (key: string, intentId: string) => {
    if (consentedCodes.size >= CODE_CACHE_SIZE)
      consentedCodes.delete(consentedCodes.keys().next().value as string);
    consentedCodes.set(key, intentId);
  };

  /** The intent a principal may act on, or a refusal that says why in plain words. */
  async function authorize(
    principal: Principal,
    id: string | undefined,
    scope: string = SCOPE_READ,
  ): Promise<string> {
    if (!isRecord(principal)) throw new HolderError("ERR_HOLDER_FORBIDDEN", "no principal was given");
    if (id !== undefined && (typeof id !== "string" || id.length > 100))
      throw invalid("id must be an intent id");
    if (principal.kind === "intent-code") {
      if (id !== undefined && id !== principal.intentId) {
        throw new HolderError("ERR_HOLDER_FORBIDDEN", "an intentCode gives access to its own intent only");
      }
      return principal.intentId;
    }
    if (principal.kind === "oauth") {
      if (id === undefined) throw invalid("id is required when signed in");
      if (options.oauthAccess === undefined) {
        throw new HolderError(
          "ERR_HOLDER_FORBIDDEN",
          "sign-in (OAuth) is not available on this holder yet; use the intentCode",
        );
      }
      requireScope(principal, scope);
      if (!(await options.oauthAccess(principal, id))) {
        throw new HolderError("ERR_HOLDER_NOT_FOUND", "there is no such intent for this sign-in");
      }
      return id;
    }
    throw new HolderError("ERR_HOLDER_FORBIDDEN", "unknown kind of principal");
  }

  /**
   * Issue #8: an intent published with a token is active at once. The person signed in by an
   * e-mail link (a verified channel) and approved this assistant with the holder's consent text on
   * the holder's page, which stands for the consent page and the double opt-in of consent-link.
   * The contact is their sign-in address, sealed; the result carries no consent link. An
   * intentCode is still made (every intent has one) and returned once, as with a draft.
   */
  async function publishSignedIn(
    principal: OAuthPrincipal,
    valid: ValidPublish,
    now: number,
  ): Promise<Omit<PublishResult, "consentUrl">> {
    requireScope(principal, SCOPE_MANAGE);
    const ownership = options.oauthPublish;
    const contact = ownership === undefined ? undefined : await ownership.contactOf(principal);
    if (ownership === undefined || contact === undefined) {
      throw new HolderError(
        "ERR_HOLDER_FORBIDDEN",
        "this sign-in has no e-mail address verified by this holder; publish without a token to get a consent link",
      );
    }
    const id = newIntentId();
    const intentCode = newIntentCode();
    const manageToken = newPageToken();
    const row: IntentRecord = {
      id,
      code_hash: ctx.codes.hash(intentCode),
      consent_token_hash: null,
      confirm_token_hash: null,
      manage_token_hash: ctx.codes.hash(manageToken),
      status: "active",
      ...publishedColumns(ctx, id, valid),
      contact_sealed: sealContact(ctx, id, { email: contact.email, manageToken }),
      contact_hash: contact.contactHash,
      consent_version: ctx.config.consentVersion,
      draft_expires_at: null,
      confirm_expires_at: null,
      created_at: now,
      updated_at: now,
      consented_at: now,
      confirmed_at: now,
      ended_at: null,
      ...FRESH_MATCHING_STATE,
      matching_since: now,
    };
    await ctx.store.transaction(async (trx) => {
      await trx.insertInto("holder_intents").values(row).execute();
      await ownership.recordOwner(trx, id, principal);
    });
    ctx.log.info(
      { event: "intent.published", intentId: id, visibility: valid.visibility, signedIn: true },
      "intent published",
    );
    const intent = intentFromRow(row, now);
    await runHook(ctx, "onActivated", id, () => hooks.onActivated(id));
    if (ownership.published !== undefined) {
      const published = ownership.published;
      await runHook(ctx, "published", id, () =>
        published(intent, contact.email, manageUrl(ctx, manageToken)),
      );
    }
    return { intent, intentCode };
  }

  async function load(id: string): Promise<IntentRecord> {
    const row = await ctx.store.db
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    if (row === undefined) throw new HolderError("ERR_HOLDER_NOT_FOUND", "there is no such intent");
    return row;
  }

  return {
    async publishSignedIn(principal: Principal, input: PublishInput) {
      if (!isRecord(principal) || principal.kind !== "oauth") {
        throw new HolderError("ERR_HOLDER_FORBIDDEN", "publishing for a person needs them signed in");
      }
      const now = ctx.clock();
      return publishSignedIn(principal, validatePublish(input, now, ctx.config), now);
    },

    async publish(input: PublishInput): Promise<PublishResult> {
      const now = ctx.clock();
      const valid = validatePublish(input, now, ctx.config);
      const id = newIntentId();
      const intentCode = newIntentCode();
      const consentToken = newPageToken();
      const row: IntentRecord = {
        id,
        code_hash: ctx.codes.hash(intentCode),
        consent_token_hash: ctx.codes.hash(consentToken),
        confirm_token_hash: null,
        manage_token_hash: null,
        status: "awaiting_consent",
        ...publishedColumns(ctx, id, valid),
        contact_sealed: null,
        contact_hash: null,
        consent_version: null,
        // Rule 1: at most 24 h, and never past the intent's own end.
        draft_expires_at: Math.min(now + draftTtl, valid.validUntil),
        confirm_expires_at: null,
        created_at: now,
        updated_at: now,
        consented_at: null,
        confirmed_at: null,
        ended_at: null,
        ...FRESH_MATCHING_STATE,
      };
      await ctx.store.db.insertInto("holder_intents").values(row).execute();
      ctx.log.info(
        { event: "intent.published", intentId: id, visibility: valid.visibility },
        "draft intent published",
      );
      return {
        intent: intentFromRow(row, now),
        intentCode,
        consentUrl: `${ctx.config.publicUrl}/consent/${consentToken}`,
      };
    },

    async principalForCode(intentCode: string): Promise<Principal | undefined> {
      if (typeof intentCode !== "string") return undefined;
      const code = intentCode.trim();
      if (!INTENT_CODE.test(code)) return undefined;
      const key = ctx.codes.hash(code);
      const cached = consentedCodes.get(key);
      if (cached !== undefined) return { kind: "intent-code", intentId: cached };
      const found = await findByToken(ctx, "code_hash", code);
      if (found === undefined) return undefined;
      const { row } = found;
      // A draft that ended before anyone gave consent is gone for its code too (rule 1).
      if (row.consented_at === null && effectiveStatus(row, ctx.clock()) === "expired") return undefined;
      if (row.consented_at !== null) remember(key, row.id);
      return { kind: "intent-code", intentId: row.id };
    },

    readableIntent: (principal, id) => authorize(principal, id),

    async get(principal: Principal, id?: string): Promise<Intent> {
      const intentId = await authorize(principal, id);
      return intentFromRow(await load(intentId), ctx.clock());
    },

    async update(principal: Principal, id: string, changes: IntentChanges): Promise<Intent> {
      if (isRecord(principal) && principal.kind === "intent-code") {
        throw new HolderError(
          "ERR_HOLDER_FORBIDDEN",
          "an intentCode can read, list matches and withdraw, but not change an intent (consent-link rule 4); withdraw it and publish a new one",
        );
      }
      const intentId = await authorize(principal, id, SCOPE_MANAGE);
      if (!isRecord(changes)) throw invalid("changes must be an object of the fields to change");
      if ("validUntil" in changes) {
        throw new HolderError(
          "ERR_HOLDER_FORBIDDEN",
          "renewing validUntil needs the person's own fresh action on the holder's page; an agent cannot renew an intent",
        );
      }
      onlyKeys(changes, ["statement", "criteria", "budget", "hiddenLimit", "buyBy"], "changes");
      if (Object.keys(changes).length === 0) throw invalid("no changes were given");
      const now = ctx.clock();
      const set: Partial<IntentRecord> = {};
      if (changes.statement !== undefined) set.statement = validateStatement(changes.statement);
      if (changes.criteria !== undefined) {
        const criteria = validateCriteria(changes.criteria, now);
        set.criteria_json = JSON.stringify(criteria);
        set.category = criteria.category;
      }
      let budget: Money | undefined;
      if (changes.budget !== undefined) {
        budget = validateBudget(changes.budget);
        set.budget_amount = budget.amount;
        set.budget_currency = budget.currency;
      }
      if (changes.buyBy !== undefined)
        set.buy_by = changes.buyBy === null ? null : futureInstant(changes.buyBy, "buyBy", now);
      const limit =
        changes.hiddenLimit === undefined || changes.hiddenLimit === null
          ? changes.hiddenLimit
          : validateHiddenLimit(changes.hiddenLimit);

      const row = await ctx.store.transaction(async (trx) => {
        const current = await trx
          .selectFrom("holder_intents")
          .selectAll()
          .where("id", "=", intentId)
          .executeTakeFirst();
        if (current === undefined) throw new HolderError("ERR_HOLDER_NOT_FOUND", "there is no such intent");
        const status = effectiveStatus(current, now);
        if (status === "withdrawn" || status === "expired") {
          throw new HolderError("ERR_HOLDER_GONE", `the intent is ${status} and can no longer be changed`);
        }
        if (status === "awaiting_email_confirmation") {
          throw new HolderError(
            "ERR_HOLDER_CONFLICT",
            "the person is confirming this intent by e-mail; it cannot change until they have",
          );
        }
        const currency = budget?.currency ?? current.budget_currency ?? COUNTRY_CURRENCY[current.country];
        if (limit === null) set.hidden_limit_sealed = null;
        else if (limit !== undefined)
          set.hidden_limit_sealed = sealHiddenLimit(ctx, intentId, { amount: limit, currency });
        else if (
          budget !== undefined &&
          current.hidden_limit_sealed !== null &&
          budget.currency !== (current.budget_currency ?? COUNTRY_CURRENCY[current.country])
        ) {
          throw invalid(
            "changing the budget's currency needs a new hiddenLimit in that currency (or null to remove it)",
          );
        }
        // New criteria or budget: the offers that fit now are delivered again from this moment.
        const rematch = status === "active" && (set.criteria_json !== undefined || budget !== undefined);
        const next = { ...set, updated_at: now, ...(rematch ? { matching_since: now } : {}) };
        await trx.updateTable("holder_intents").set(next).where("id", "=", intentId).execute();
        return { ...current, ...next } as IntentRecord;
      });
      ctx.log.info({ event: "intent.updated", intentId, fields: Object.keys(changes) }, "intent updated");
      if (row.status === "active" && hooks.onChanged !== undefined) {
        const onChanged = hooks.onChanged;
        await runHook(ctx, "onChanged", intentId, () => onChanged(intentId));
      }
      return intentFromRow(row, now);
    },

    async withdraw(principal: Principal, id?: string): Promise<{ status: "withdrawn" }> {
      const intentId = await authorize(principal, id, SCOPE_MANAGE);
      const { row } = await withdrawIntent(ctx, hooks, intentId);
      if (row.status !== "withdrawn") {
        throw new HolderError(
          "ERR_HOLDER_GONE",
          "the intent has already expired; nothing more is delivered for it",
        );
      }
      return { status: "withdrawn" };
    },

    async expireDue(): Promise<number> {
      const now = ctx.clock();
      let total = 0;
      const ended: string[] = [];
      // Drafts nobody consented to, confirmations nobody clicked, intents past validUntil.
      const kinds = [
        { status: "awaiting_consent", column: "draft_expires_at" },
        { status: "awaiting_email_confirmation", column: "confirm_expires_at" },
        { status: "active", column: "valid_until" },
      ] as const;
      for (const kind of kinds) {
        for (;;) {
          const ids = await ctx.store.db
            .selectFrom("holder_intents")
            .select("id")
            .where("status", "=", kind.status)
            .where(kind.column, "<=", now)
            .limit(EXPIRE_BATCH)
            .execute();
          if (ids.length === 0) break;
          const changed = await ctx.store.db
            .updateTable("holder_intents")
            .set({
              status: "expired",
              ended_at: now,
              updated_at: now,
              contact_sealed: null,
              contact_hash: null,
            })
            .where(
              "id",
              "in",
              ids.map((r) => r.id),
            )
            .where("status", "=", kind.status)
            .where(kind.column, "<=", now)
            .returning("id")
            .execute();
          total += changed.length;
          if (kind.status === "active") ended.push(...changed.map((r) => r.id));
          if (ids.length < EXPIRE_BATCH) break;
        }
      }
      if (total > 0) ctx.log.info({ event: "intent.expired", count: total }, "intents expired");
      for (const intentId of ended)
        await runHook(ctx, "onEnded", intentId, () => hooks.onEnded(intentId, "expired"));
      return total;
    },
  };
}
