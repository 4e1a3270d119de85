import { canonicalBytes } from "../canonical/canonicalize.js";
import { MAX_RECORD_BYTES, RECORD_PROFILE, SEAL_JWS_TYPE } from "../constants.js";
import { AgreementError } from "../errors.js";
import { signCanonical } from "../jws/compact.js";
import { KEY_PAGE_FORM, keyPageParty } from "../jws/header.js";
import type { SigningKey } from "../jws/keys.js";
import { readSignedMessage } from "../jws/verify.js";
import { newId } from "../message/ids.js";
import type { ParsedMessage } from "../message/parse.js";
import type { Accept, Message, Offer } from "../message/types.js";
import { checkBinding, checkTerms, sealingParty } from "./binding.js";
import { readRecord } from "./read.js";
import { deriveTerms } from "./terms.js";
import type { AgreementRecord, RecordedMessage, RecordKind, RecordParty, UnsealedRecord } from "./types.js";

/** A message as the holder kept it: the JWS it arrived or left as, or the parsed unsigned message. */
export type HeldMessage = string | ParsedMessage;

export interface RecordInput {
  readonly kind: RecordKind;
  /** two_signatures and their_reply: the offer's JWS. our_signature: its JWS or the parsed unsigned offer. */
  readonly offer: HeldMessage;
  /** two_signatures and our_signature: the accept's JWS. */
  readonly acceptance?: string;
  /** their_reply only: what the receiving server saw of the person's reply. */
  readonly reply?: {
    readonly hash: string;
    readonly authentication_results: string;
    readonly received_at: number;
    readonly slot?: number;
    /** The replier's organisation, as the owner knows it. */
    readonly org_name: string;
    readonly party?: string;
  };
  /** The SHA-256 of every message in the thread, in order (`AgreementThread.chain()`). */
  readonly chain: readonly string[];
  /** Whether the offer had not been replaced at acceptance (`AgreementThread.isCurrent`). */
  readonly offerCurrent: boolean;
  readonly id?: string;
}

export interface SealOptions {
  readonly key: SigningKey;
  /** The holder's party key page. */
  readonly jku: string;
  /** Unix seconds of the seal; default now. */
  readonly now?: number;
}

const hold = (
  held: HeldMessage,
): { recorded: RecordedMessage; parsed: ParsedMessage; kid?: string; party?: string } => {
  if (typeof held === "string") {
    const { header, parsed } = readSignedMessage(held);
    return {
      recorded: { jws: held, hash: parsed.hash },
      parsed,
      kid: header.kid,
      party: parsed.message.from.party ?? keyPageParty(header.jku)?.party,
    };
  }
  return {
    recorded: { json: held.canonical, hash: held.hash },
    parsed: held,
    ...(held.message.from.party ? { party: held.message.from.party } : {}),
  };
};

const partyEntry = (
  role: RecordParty["role"],
  message: Message,
  signed: { kid?: string; party?: string },
): RecordParty => ({
  role,
  ...(signed.party === undefined ? {} : { party: signed.party }),
  address: message.from.address,
  org_name: message.acting_for.org_name,
  ...(signed.kid === undefined ? {} : { kid: signed.kid }),
  ...(message.authority === undefined ? {} : { authority: { ...message.authority } }),
});

const refuse = (message: string): never => {
  throw new AgreementError("ERR_RECORD_INVALID", message);
};

/** The record's content from the messages: parties, terms and agreed_at are derived, never typed in. */
export const buildRecord = (input: RecordInput): Omit<UnsealedRecord, "sealed_at"> => {
  const offer = hold(input.offer);
  if (offer.parsed.message.type !== "quote" && offer.parsed.message.type !== "propose_times") {
    refuse(`a ${offer.parsed.message.type} cannot be agreed: only a quote or propose_times`);
  }
  const offerMessage = offer.parsed.message as Offer;
  const common = {
    profile: RECORD_PROFILE,
    id: input.id ?? newId(),
    thread: offerMessage.thread,
    kind: input.kind,
    chain: [...input.chain],
    offer_current: input.offerCurrent,
  } as const;
  if (input.kind === "their_reply") {
    const reply = input.reply ?? refuse("a their_reply record needs the reply");
    if (input.acceptance !== undefined) refuse("a their_reply record has no acceptance");
    const { org_name, party, ...recorded } = reply;
    return {
      ...common,
      parties: [
        partyEntry("offerer", offerMessage, offer),
        {
          role: "accepter",
          ...(party === undefined ? {} : { party }),
          address: offerMessage.to.address,
          org_name,
        },
      ],
      offer: offer.recorded,
      reply: { ...recorded },
      terms: deriveTerms(offerMessage, reply.slot),
      agreed_at: reply.received_at,
    };
  }
  if (input.reply !== undefined) refuse(`a ${input.kind} record has no reply`);
  if (input.acceptance === undefined) refuse(`a ${input.kind} record needs the signed acceptance`);
  const acceptance = hold(input.acceptance as string);
  const accept = acceptance.parsed.message as Accept;
  if (accept.type !== "accept") refuse(`the acceptance is a ${accept.type}, not an accept`);
  return {
    ...common,
    parties: [partyEntry("offerer", offerMessage, offer), partyEntry("accepter", accept, acceptance)],
    offer: offer.recorded,
    acceptance: acceptance.recorded,
    terms: deriveTerms(offerMessage, accept.slot),
    agreed_at: accept.iat,
  };
};

/**
 * Builds and seals a record, then reads it back through workflow steps 1 to 3 and the seal's
 * party rule, so a record that would not check out (a late accept, a replaced offer, a chain
 * without the offer) is refused here instead of being handed to anyone.
 */
export const createRecord = async (input: RecordInput, seal: SealOptions): Promise<AgreementRecord> => {
  if (!keyPageParty(seal.jku))
    throw new AgreementError("ERR_JWS_HEADER", `jku must be a party key page address (${KEY_PAGE_FORM})`);
  const content: UnsealedRecord = {
    ...buildRecord(input),
    sealed_at: seal.now ?? Math.floor(Date.now() / 1000),
  };
  const record: AgreementRecord = {
    ...content,
    seal: await signCanonical(content, seal.key, { jku: seal.jku, typ: SEAL_JWS_TYPE }),
  };
  const size = canonicalBytes(record).byteLength;
  if (size > MAX_RECORD_BYTES) {
    throw new AgreementError(
      "ERR_RECORD_TOO_LARGE",
      `the record would be ${size.toLocaleString("en-US")} bytes; at most ${MAX_RECORD_BYTES.toLocaleString("en-US")} are allowed`,
    );
  }
  const read = readRecord(record);
  checkTerms(read);
  checkBinding(read);
  sealingParty(read);
  return record;
};
