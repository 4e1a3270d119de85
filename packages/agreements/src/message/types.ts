import type { MESSAGE_CONTEXT, MESSAGE_PROFILE } from "../constants.js";

/** The six message types of agent-intents/1. */
export const MESSAGE_TYPES = ["ask_quote", "quote", "propose_times", "accept", "decline", "cancel"] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

/** The two types that can be accepted. */
export const OFFER_TYPES = ["quote", "propose_times"] as const;
export type OfferType = (typeof OFFER_TYPES)[number];

export const AGENT_KINDS = ["stackie", "connected", "api", "person"] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

export const DECIDED_BY = ["limits", "owner", "person"] as const;
export type DecidedBy = (typeof DECIDED_BY)[number];

export const DECLINE_REASONS = ["price", "timing", "not_available", "other"] as const;
export type DeclineReason = (typeof DECLINE_REASONS)[number];

export interface Sender {
  /** `pty_` and 20 lowercase letters or digits: the opaque public party id. */
  readonly party?: string;
  readonly address: string;
  readonly name?: string;
  /** An https address of the sender's A2A agent card. */
  readonly card?: string;
}

export interface Recipient {
  readonly address: string;
}

export interface ActingFor {
  readonly org_name: string;
  /** The e-mail address of the person responsible, as in the Agent-of header. */
  readonly contact: string;
}

export interface AgentInfo {
  readonly name: string;
  readonly kind: AgentKind;
}

/** On what authority the sender sent the message; never who approved it. */
export interface Authority {
  readonly decided_by: DecidedBy;
  readonly level?: string;
  readonly limits_version?: string;
}

/** Whole minor units as a decimal string beside an ISO 4217 code: `{"amount":"125000","currency":"EUR"}`. */
export interface Money {
  readonly amount: string;
  readonly currency: string;
}

export interface AskedItem {
  readonly description: string;
  /** Whole units (≥ 1); fractions are expressed with a smaller `unit`. */
  readonly quantity: number;
  readonly unit?: string;
}

export interface QuotedItem extends AskedItem {
  readonly unit_price?: Money;
}

export interface Slot {
  /** RFC 3339 with an offset or Z. */
  readonly start: string;
  readonly end: string;
  /** An IANA time zone name, e.g. Europe/Bratislava. */
  readonly time_zone: string;
}

interface Common<T extends MessageType> {
  readonly "@context": typeof MESSAGE_CONTEXT;
  readonly profile: typeof MESSAGE_PROFILE;
  readonly id: string;
  readonly type: T;
  readonly thread: string;
  readonly in_reply_to?: string;
  readonly from: Sender;
  readonly to: Recipient;
  readonly nonce: string;
  readonly iat: number;
  readonly exp: number;
  /** Lowercase hex SHA-256 of the canonical message this one answers (present with in_reply_to). */
  readonly prev?: string;
  readonly acting_for: ActingFor;
  readonly agent: AgentInfo;
  readonly authority?: Authority;
  /** Third-party text for the receiver: never an instruction. */
  readonly note?: string;
}

export interface AskQuote extends Common<"ask_quote"> {
  readonly items: readonly AskedItem[];
  /** YYYY-MM-DD. */
  readonly wanted_by?: string;
}

export interface Quote extends Common<"quote"> {
  readonly items: readonly QuotedItem[];
  readonly total: Money;
  readonly delivery_by?: string;
  /** The id of an earlier offer in the thread this one counters. */
  readonly replaces?: string;
}

export interface ProposeTimes extends Common<"propose_times"> {
  readonly slots: readonly Slot[];
  readonly purpose?: string;
  readonly location?: string;
  readonly replaces?: string;
}

export interface Accept extends Common<"accept"> {
  /** The offer id. */
  readonly ref: string;
  /** Zero-based index of the chosen slot, for propose_times. */
  readonly slot?: number;
}

export interface Decline extends Common<"decline"> {
  readonly ref: string;
  readonly reason?: DeclineReason;
}

export interface Cancel extends Common<"cancel"> {
  readonly ref: string;
}

export type Message = AskQuote | Quote | ProposeTimes | Accept | Decline | Cancel;
export type Offer = Quote | ProposeTimes;

export const isOffer = (message: Message): message is Offer =>
  message.type === "quote" || message.type === "propose_times";
