export { CURRENCY_CODES, CURRENCY_MINOR_UNITS, isCurrencyCode } from "./currencies.js";
export { messageHash } from "./hash.js";
export { newId, newNonce } from "./ids.js";
export { type ParsedMessage, parseMessage, parseMessageValue, validateMessage } from "./parse.js";
export { dropUnknownMembers, MESSAGE_SHAPES, unknownMembers } from "./project.js";
export { messageRuleViolations } from "./rules.js";
export {
  type Accept,
  type ActingFor,
  AGENT_KINDS,
  type AgentInfo,
  type AgentKind,
  type AskedItem,
  type AskQuote,
  type Authority,
  type Cancel,
  DECIDED_BY,
  DECLINE_REASONS,
  type DecidedBy,
  type Decline,
  type DeclineReason,
  isOffer,
  MESSAGE_TYPES,
  type Message,
  type MessageType,
  type Money,
  OFFER_TYPES,
  type Offer,
  type OfferType,
  type ProposeTimes,
  type Quote,
  type QuotedItem,
  type Recipient,
  type Sender,
  type Slot,
} from "./types.js";
