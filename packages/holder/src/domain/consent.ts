/**
 * The person's side of the consent-link profile, behind the holder's own pages: the consent page
 * (rules 2, 3, 5), the double opt-in confirmation, the manage page of every e-mail, and the
 * match digest to the verified channel. Tokens arrive in clear from a URL and are only ever
 * compared as keyed hashes; the e-mail address is sealed the moment it arrives.
 */
import { domainToASCII } from "node:url";
import type { Selectable } from "@doorbell/store";
import type { HolderContext } from "../context.js";
import { confirmationMail, matchDigestMail } from "../mail/templates.js";
import { type MatchPosition, readMatches, START } from "../matching/reader.js";
import type { OfferRow } from "../schema.js";
import {
  effectiveStatus,
  findByToken,
  type IntentHooks,
  type IntentRecord,
  intentFromRow,
  manageUrl,
  newPageToken,
  noIntentHooks,
  openContact,
  PAGE_TOKEN,
  runHook,
  sealContact,
  sendQuietly,
  TAKEN_PREFIX,
  withdrawIntent,
} from "./intents.js";
import type { ConsentService, ConsentView } from "./services.js";
import { type Area, HolderError, type Intent, type Match, type Offer } from "./types.js";

/** The consent service plus what the matching engine calls when it has recorded matches. */
export interface HolderConsentService extends ConsentService {
  /**
   * E-mails the person the intent's matches not mailed yet (`mailed_at` null), newest first, and
   * marks them mailed. Only for an active intent with a verified channel. Returns how many matches
   * the mail carried (0: nothing to send, or the mail failed and the matches wait for the next one).
   */
  sendMatchDigest(intentId: string): Promise<number>;
}

/** A digest lists at most this many offers; the rest are counted and shown on the manage page. */
export const DIGEST_LIST_MAX = 20;
/** The manage page shows at most this many matches, newest first. */
export const MANAGE_MATCHES_MAX = 200;

// ---------------------------------------------------------------------------------------------
// E-mail addresses

const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

export interface NormalisedEmail {
  /** What mail is sent to: the local part as given, the domain in lower-case ASCII (IDNA). */
  address: string;
  /** What the keyed hash is taken of: the whole address in lower case. */
  key: string;
}

/**
 * Checks and normalises an e-mail address typed on the consent page. Messages never repeat the
 * address. Quoted local parts, IP-literal domains and non-ASCII local parts are refused: they are
 * legal but rarely real, and every one of them is a way to hide something in a stored value.
 */
export function normaliseEmail(value: unknown): NormalisedEmail {
  const invalid = (why: string) =>
    new HolderError("ERR_HOLDER_INVALID", `${why}; enter an address like name@example.sk`);
  if (typeof value !== "string") throw invalid("the e-mail address is missing");
  const trimmed = value.normalize("NFC").trim();
  if (trimmed === "") throw invalid("the e-mail address is empty");
  if (trimmed.length > 254) throw invalid("the e-mail address is longer than 254 characters");
  if (/[\s\p{C}]/u.test(trimmed))
    throw invalid("the e-mail address must not contain spaces, line breaks or invisible characters");
  const at = trimmed.lastIndexOf("@");
  if (at < 0 || trimmed.indexOf("@") !== at) throw invalid("the e-mail address needs exactly one @");
  const local = trimmed.slice(0, at);
  const rawDomain = trimmed.slice(at + 1);
  if (local === "") throw invalid("the part before @ is empty");
  if (local.length > 64) throw invalid("the part before @ is longer than 64 characters");
  if (!LOCAL_PART.test(local)) {
    throw invalid(
      "the part before @ may hold only letters, digits, dots (not two in a row, not first or last) and !#$%&'*+/=?^_`{|}~-",
    );
  }
  if (rawDomain === "") throw invalid("the part after @ is empty");
  if (rawDomain.startsWith("[")) throw invalid("the part after @ must be a domain name, not an IP address");
  // Letters (any script), digits, dots and hyphens only: IDNA would silently drop anything else.
  if (!/^[\p{L}\p{M}\p{N}.-]+$/u.test(rawDomain))
    throw invalid("the part after @ is not a valid domain name");
  const domain = domainToASCII(rawDomain.toLowerCase());
  if (domain === "") throw invalid("the part after @ is not a valid domain name");
  const labels = domain.split(".");
  if (labels.length < 2 || labels.some((label) => !LABEL.test(label)) || !TLD.test(labels.at(-1) as string)) {
    throw invalid("the part after @ is not a valid domain name");
  }
  const address = `${local}@${domain}`;
  if (address.length > 254) throw invalid("the e-mail address is longer than 254 characters");
  return { address, key: address.toLowerCase() };
}

// ---------------------------------------------------------------------------------------------
// Offers as the manage page shows them

type OfferRecord = Selectable<OfferRow>;

export function offerFromRow(row: OfferRecord): Offer {
  const location: Area = { country: row.country };
  if (row.region !== null) location.region = row.region;
  const source: Offer["source"] = { kind: row.source_kind };
  if (row.source_ref !== null) source.ref = row.source_ref;
  if (row.seller !== null) source.seller = row.seller;
  const offer: Offer = {
    id: row.id,
    source,
    title: row.title,
    category: row.category,
    price: { amount: row.price_amount, currency: row.price_currency },
    location,
    attributes: JSON.parse(row.attributes_json) as Offer["attributes"],
    publishedAt: new Date(row.published_at).toISOString(),
  };
  if (row.in_reply_to !== null) offer.inReplyTo = row.in_reply_to;
  if (row.description !== null) offer.description = row.description;
  if (row.url !== null) offer.url = row.url;
  return offer;
}

// ---------------------------------------------------------------------------------------------

const goneMessage = (status: "expired" | "withdrawn") =>
  status === "withdrawn"
    ? "this intent was withdrawn; ask your assistant to publish a new one if you still want it"
    : "this intent expired before it was confirmed; ask your assistant to publish it again";

export function createConsentService(
  ctx: HolderContext,
  hooks: IntentHooks = noIntentHooks,
): HolderConsentService {
  const wellFormed = (token: unknown): token is string => typeof token === "string" && PAGE_TOKEN.test(token);

  /** The draft a consent token names, live (bare hash) or already taken (prefixed hash). */
  async function findConsent(
    token: string,
  ): Promise<{ row: IntentRecord; taken: boolean; hash: string } | undefined> {
    const bare = ctx.codes.lookupHashes(token);
    const rows = await ctx.store.db
      .selectFrom("holder_intents")
      .selectAll()
      .where("consent_token_hash", "in", [...bare, ...bare.map((hash) => TAKEN_PREFIX + hash)])
      .execute();
    for (const row of rows) {
      const stored = row.consent_token_hash;
      if (stored === null) continue;
      const taken = stored.startsWith(TAKEN_PREFIX);
      if (ctx.codes.verify(token, taken ? stored.slice(TAKEN_PREFIX.length) : stored))
        return { row, taken, hash: stored };
    }
    return undefined;
  }

  async function byManageToken(token: unknown): Promise<IntentRecord> {
    const found = wellFormed(token) ? await findByToken(ctx, "manage_token_hash", token) : undefined;
    if (found === undefined) {
      throw new HolderError(
        "ERR_HOLDER_NOT_FOUND",
        "this manage link is not valid; open it from one of the holder's e-mails",
      );
    }
    return found.row;
  }

  return {
    async consentView(consentToken: string): Promise<ConsentView> {
      if (!wellFormed(consentToken)) return { state: "unknown" };
      const found = await findConsent(consentToken);
      if (found === undefined) return { state: "unknown" };
      if (found.taken) return { state: "taken" };
      const now = ctx.clock();
      if (effectiveStatus(found.row, now) !== "awaiting_consent") return { state: "expired" };
      return {
        state: "open",
        intent: intentFromRow(found.row, now),
        consentText: ctx.config.consentText,
        consentVersion: ctx.config.consentVersion,
      };
    },

    async giveConsent(
      consentToken: string,
      input: { email: string; accepted: boolean },
    ): Promise<{ sentTo: "your e-mail" }> {
      if (!wellFormed(consentToken))
        throw new HolderError("ERR_HOLDER_NOT_FOUND", "this consent link is not valid");
      if (typeof input !== "object" || input === null)
        throw new HolderError("ERR_HOLDER_INVALID", "the form is empty");
      if (input.accepted !== true) {
        throw new HolderError(
          "ERR_HOLDER_INVALID",
          "to keep this intent the holder needs your consent: tick the box to agree",
        );
      }
      const email = normaliseEmail(input.email);
      const found = await findConsent(consentToken);
      if (found === undefined)
        throw new HolderError("ERR_HOLDER_NOT_FOUND", "this consent link is not valid");
      if (found.taken) {
        throw new HolderError(
          "ERR_HOLDER_CONFLICT",
          "consent has already been given for this intent through this link",
        );
      }
      const now = ctx.clock();
      const status = effectiveStatus(found.row, now);
      if (status === "expired" || status === "withdrawn")
        throw new HolderError("ERR_HOLDER_GONE", goneMessage(status));

      const id = found.row.id;
      const confirmToken = newPageToken();
      const manageToken = newPageToken();
      const confirmHash = ctx.codes.hash(confirmToken);
      const confirmExpiresAt = Math.min(now + ctx.config.confirmTtlMs, found.row.valid_until);
      // Rule 3, first-come: the update wins only while the bare hash is still there, so of two
      // concurrent submissions exactly one changes the row (SQLite serialises writers; PostgreSQL
      // re-checks the WHERE after the first commit).
      const taken = await ctx.store.db
        .updateTable("holder_intents")
        .set({
          status: "awaiting_email_confirmation",
          consent_token_hash: TAKEN_PREFIX + found.hash,
          confirm_token_hash: confirmHash,
          manage_token_hash: ctx.codes.hash(manageToken),
          contact_sealed: sealContact(ctx, id, { email: email.address, manageToken }),
          contact_hash: ctx.contacts.hash(email.key),
          consent_version: ctx.config.consentVersion,
          consented_at: now,
          confirm_expires_at: confirmExpiresAt,
          updated_at: now,
        })
        .where("id", "=", id)
        .where("status", "=", "awaiting_consent")
        .where("consent_token_hash", "=", found.hash)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) !== 1) {
        throw new HolderError(
          "ERR_HOLDER_CONFLICT",
          "consent has already been given for this intent through this link",
        );
      }
      ctx.log.info(
        { event: "intent.consent_given", intentId: id },
        "consent given; confirmation e-mail follows",
      );

      const mail = confirmationMail({
        holderName: ctx.config.name,
        statement: found.row.statement,
        manageUrl: manageUrl(ctx, manageToken),
        confirmUrl: `${ctx.config.publicUrl}/confirm/${confirmToken}`,
        confirmExpiresAt: new Date(confirmExpiresAt).toISOString(),
        hasHiddenLimit: found.row.hidden_limit_sealed !== null,
      });
      if (!(await sendQuietly(ctx, { to: email.address, ...mail }, "confirmation", id))) {
        // Without the mail nobody can confirm: give the link back so the person can try again.
        await ctx.store.db
          .updateTable("holder_intents")
          .set({
            status: "awaiting_consent",
            consent_token_hash: found.hash,
            confirm_token_hash: null,
            manage_token_hash: null,
            contact_sealed: null,
            contact_hash: null,
            consent_version: null,
            consented_at: null,
            confirm_expires_at: null,
            updated_at: now,
          })
          .where("id", "=", id)
          .where("status", "=", "awaiting_email_confirmation")
          .where("confirm_token_hash", "=", confirmHash)
          .execute();
        throw new HolderError(
          "ERR_HOLDER_UNAVAILABLE",
          "the confirmation e-mail could not be sent just now; nothing was saved, please try again in a few minutes",
        );
      }
      return { sentTo: "your e-mail" };
    },

    async confirmEmail(confirmToken: string): Promise<Intent> {
      const notValid = () =>
        new HolderError(
          "ERR_HOLDER_NOT_FOUND",
          "this confirmation link is not valid; open it from the holder's e-mail",
        );
      if (!wellFormed(confirmToken)) throw notValid();
      const now = ctx.clock();
      const result = await ctx.store.transaction(async (trx) => {
        const found = await findByToken(ctx, "confirm_token_hash", confirmToken, trx);
        if (found === undefined) throw notValid();
        const row = found.row;
        const status = effectiveStatus(row, now);
        // A second click (or a mail scanner's) on a confirmed intent changes nothing.
        if (status === "active") return { row, activated: false };
        if (status === "expired" || status === "withdrawn") {
          throw new HolderError(
            "ERR_HOLDER_GONE",
            row.confirmed_at !== null
              ? `this intent has ${status === "expired" ? "expired" : "been withdrawn"}`
              : goneMessage(status),
          );
        }
        if (status !== "awaiting_email_confirmation") throw notValid();
        const updated = await trx
          .updateTable("holder_intents")
          .set({ status: "active", confirmed_at: now, updated_at: now, matching_since: now })
          .where("id", "=", row.id)
          .where("status", "=", "awaiting_email_confirmation")
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) !== 1)
          throw new HolderError("ERR_HOLDER_CONFLICT", "the intent changed at the same time; try again");
        return {
          row: { ...row, status: "active" as const, confirmed_at: now, updated_at: now, matching_since: now },
          activated: true,
        };
      });
      if (result.activated) {
        const id = result.row.id;
        ctx.log.info({ event: "intent.activated", intentId: id }, "e-mail confirmed; intent active");
        await runHook(ctx, "onActivated", id, () => hooks.onActivated(id));
      }
      return intentFromRow(result.row, now);
    },

    async manageView(manageToken: string): Promise<{ intent: Intent; matches: Match[] }> {
      const row = await byManageToken(manageToken);
      const all = await readMatches(ctx.store.db, row.id, START);
      return {
        intent: intentFromRow(row, ctx.clock()),
        matches: all
          .slice(-MANAGE_MATCHES_MAX)
          .reverse()
          .map(({ offer, deliveredAt }) => ({ offer, deliveredAt: new Date(deliveredAt).toISOString() })),
      };
    },

    async withdrawByManageToken(manageToken: string): Promise<Intent> {
      const row = await byManageToken(manageToken);
      const ended = await withdrawIntent(ctx, hooks, row.id);
      return intentFromRow(ended.row, ctx.clock());
    },

    async sendMatchDigest(intentId: string): Promise<number> {
      const now = ctx.clock();
      const row = await ctx.store.db
        .selectFrom("holder_intents")
        .selectAll()
        .where("id", "=", intentId)
        .executeTakeFirst();
      if (
        row === undefined ||
        effectiveStatus(row, now) !== "active" ||
        row.confirmed_at === null ||
        row.contact_sealed === null
      ) {
        return 0;
      }
      const contact = openContact(ctx, intentId, row.contact_sealed);
      const mailed =
        row.mailed_at === null ? START : { at: Number(row.mailed_at), id: Number(row.mailed_seq) };
      const pending = await readMatches(ctx.store.db, row.id, mailed);
      const head = pending.at(-1)?.position;
      if (head === undefined) return 0;
      // Claim by moving the watermark from where this digest read it: of two digests running at
      // once only one moves it, so no match is mailed twice.
      if (!(await moveDigestWatermark(ctx, intentId, mailed, head))) return 0;
      const listed = pending.slice(-DIGEST_LIST_MAX).reverse();
      const mail = matchDigestMail({
        holderName: ctx.config.name,
        statement: row.statement,
        manageUrl: manageUrl(ctx, contact.manageToken),
        matches: listed.map(({ offer }) => ({
          title: offer.title,
          price: offer.price,
          location: offer.location,
          ...(offer.url === undefined ? {} : { url: offer.url }),
        })),
        more: pending.length - listed.length,
      });
      if (await sendQuietly(ctx, { to: contact.email, ...mail }, "match_digest", intentId))
        return pending.length;
      // The matches wait for the next digest.
      await moveDigestWatermark(ctx, intentId, head, mailed);
      return 0;
    },
  };
}

/** Moves an intent's digest watermark from `from` to `to`; false if it was not at `from`. */
async function moveDigestWatermark(
  ctx: HolderContext,
  intentId: string,
  from: MatchPosition,
  to: MatchPosition,
): Promise<boolean> {
  const result = await ctx.store.db
    .updateTable("holder_intents")
    .set(to === START ? { mailed_at: null, mailed_seq: null } : { mailed_at: to.at, mailed_seq: to.id })
    .where("id", "=", intentId)
    .where((eb) =>
      from === START
        ? eb("mailed_at", "is", null)
        : eb.and([eb("mailed_at", "=", from.at), eb("mailed_seq", "=", from.id)]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
