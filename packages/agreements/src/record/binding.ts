import { sameJsonData } from "../canonical/same.js";
import { AgreementError, type AgreementErrorCode } from "../errors.js";
import { keyPageOf } from "../jws/header.js";
import type { Authority, Message } from "../message/types.js";
import type { ReadRecord, RecordMessage } from "./read.js";
import { deriveTerms } from "./terms.js";
import type { RecordParty, Terms } from "./types.js";

const fail = (code: AgreementErrorCode, message: string): never => {
  throw new AgreementError(code, message);
};

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
const sameAuthority = (a: Authority | undefined, b: Authority | undefined): boolean =>
  (a === undefined && b === undefined) || (a !== undefined && b !== undefined && sameJsonData(a, b));

/**
 * Workflow step 2: "Recompute the terms from the offer, and the chosen slot for times, and require
 * the record to carry exactly those terms."
 */
export const checkTerms = ({ record, offer, acceptance }: ReadRecord): void => {
  const slot = acceptance ? acceptance.message.slot : record.reply?.slot;
  let derived: Terms;
  try {
    derived = deriveTerms(offer.message, slot);
  } catch (error) {
    throw new AgreementError("ERR_RECORD_TERMS", error instanceof Error ? error.message : String(error));
  }
  // Both are schema-valid JSON data, so equal values are equal canonical forms.
  if (!sameJsonData(derived, record.terms)) {
    fail("ERR_RECORD_TERMS", "the terms in the record are not the terms of the offer (they were changed)");
  }
};

const partyOf = (side: RecordMessage<Message>): string | undefined =>
  side.message.from.party ?? (side.header ? keyPageOf(side.header.jku)?.party : undefined);

/** Each party entry says what that side's own message says: address, party, org, kid, authority. */
const checkParty = (entry: RecordParty, side: RecordMessage<Message>, role: string): void => {
  const { message } = side;
  if (!same(entry.address, message.from.address))
    fail("ERR_RECORD_BINDING", `the ${role}'s address is not the sender of its message`);
  if (entry.org_name !== message.acting_for.org_name)
    fail("ERR_RECORD_BINDING", `the ${role}'s org_name is not the one its message acts for`);
  const party = partyOf(side);
  if (entry.party !== party)
    fail("ERR_RECORD_BINDING", `the ${role}'s party is not the party of its message`);
  // agent-agreement/1 gives every party a kid. A signed side's must be the kid it signed with; an
  // unsigned side's (the key it publishes) has no signature to be bound to, and is left as given.
  if (side.header !== undefined && entry.kid !== side.header.kid)
    fail("ERR_RECORD_BINDING", `the ${role}'s kid is not the kid its message was signed with`);
  if (!sameAuthority(entry.authority, message.authority)) {
    fail("ERR_RECORD_BINDING", `the ${role}'s authority is not the authority its message published`);
  }
};

/** Relaxed DKIM alignment of an Authentication-Results value with an address's domain. */
const dkimPassAligned = (results: string, address: string): boolean => {
  const domain = address.slice(address.lastIndexOf("@") + 1).toLowerCase();
  return results
    .split(";")
    .map((part) => part.trim().toLowerCase())
    .filter((part) => /^dkim\s*=\s*pass\b/.test(part))
    .some((part) => {
      const signer = /\bheader\.d\s*=\s*([a-z0-9.-]+)/.exec(part)?.[1];
      return (
        signer !== undefined &&
        (signer === domain || domain.endsWith(`.${signer}`) || signer.endsWith(`.${domain}`))
      );
    });
};

/**
 * Workflow step 3: "the acceptance is addressed to the sender of the offer, names the offer in ref,
 * carries the offer hash in prev, was issued no later than the offer expires, and the offer had not
 * been replaced when it was accepted" — plus what ties the rest of the record to its messages.
 */
export const checkBinding = ({ record, offer, acceptance }: ReadRecord): void => {
  const o = offer.message;
  if (o.thread !== record.thread)
    fail("ERR_RECORD_BINDING", "the offer belongs to another thread than the record");
  if (!record.offer_current) fail("ERR_OFFER_REPLACED", "the offer had been replaced when it was accepted");
  const [offerer, accepter] = record.parties;
  checkParty(offerer, offer, "offerer");

  if (acceptance) {
    const a = acceptance.message;
    if (a.thread !== record.thread)
      fail("ERR_RECORD_BINDING", "the acceptance belongs to another thread than the record");
    if (!same(a.to.address, o.from.address))
      fail("ERR_RECORD_BINDING", "the acceptance is not addressed to the sender of the offer");
    if (!same(a.from.address, o.to.address))
      fail("ERR_RECORD_BINDING", "the acceptance is not from the receiver of the offer");
    if (a.ref !== o.id) fail("ERR_RECORD_BINDING", "the acceptance does not name the offer in ref");
    if (a.prev !== offer.parsed.hash)
      fail("ERR_RECORD_BINDING", "the acceptance does not carry the offer's hash in prev");
    if (a.iat > o.exp) {
      fail(
        "ERR_OFFER_EXPIRED",
        `the offer had expired when it was accepted (it expired ${iso(o.exp)}, the acceptance was signed ${iso(a.iat)})`,
      );
    }
    if (a.iat < o.iat) fail("ERR_RECORD_BINDING", "the acceptance was signed before the offer");
    if (record.agreed_at !== a.iat)
      fail("ERR_RECORD_BINDING", "agreed_at is not the time the acceptance was signed");
    checkParty(accepter, acceptance, "accepter");
  } else {
    const reply = record.reply;
    if (!reply)
      throw new AgreementError("ERR_RECORD_INVALID", "the record has neither an acceptance nor a reply");
    if (!same(accepter.address, o.to.address))
      fail("ERR_RECORD_BINDING", "the reply's sender is not the receiver of the offer");
    if (reply.received_at > o.exp) {
      fail(
        "ERR_OFFER_EXPIRED",
        `the offer had expired when the reply arrived (it expired ${iso(o.exp)}, the reply arrived ${iso(reply.received_at)})`,
      );
    }
    if (reply.received_at < o.iat) fail("ERR_RECORD_BINDING", "the reply arrived before the offer was made");
    if (record.agreed_at !== reply.received_at)
      fail("ERR_RECORD_BINDING", "agreed_at is not the time the reply was received");
    if (!dkimPassAligned(reply.authentication_results, accepter.address)) {
      fail(
        "ERR_RECORD_BINDING",
        "the receiving server's result does not show DKIM passing for the replier's domain",
      );
    }
  }
  if (record.sealed_at !== undefined && record.sealed_at < record.agreed_at)
    fail("ERR_RECORD_BINDING", "the record was sealed before the agreement was made");
};

/**
 * The side that sealed the record, named by the seal's key page. two_signatures: either side;
 * our_signature: the accepter (the side that signed); their_reply: the offerer.
 */
export const sealingParty = ({ record, sealHeader }: ReadRecord): RecordParty => {
  const party = keyPageOf(sealHeader.jku)?.party;
  const [offerer, accepter] = record.parties;
  const allowed =
    record.kind === "two_signatures"
      ? [offerer, accepter]
      : record.kind === "our_signature"
        ? [accepter]
        : [offerer];
  const sealer = allowed.find((entry) => entry.party !== undefined && entry.party === party);
  if (!sealer) {
    const who =
      record.kind === "our_signature"
        ? "the accepter"
        : record.kind === "their_reply"
          ? "the offerer"
          : "one of its parties";
    return fail(
      "ERR_RECORD_SEAL",
      `the seal is by ${party ?? "an unnamed party"}; a ${record.kind} record is sealed by ${who}`,
    );
  }
  return sealer;
};
