export { CURRENCY_CODES, CURRENCY_MINOR_UNITS, isCurrencyCode } from "./currencies.js";
export { messageHash } from "./hash.js";
export { newId, newNonce } from "./ids.js";
export { type ParsedMessage, parseMessage, parseMessageValue, validateMessage } from "./parse.js";
export { dropUnknownMembers, MESSAGE_SHAPES, unknownMembers } from "./project.js";
export { messageRuleViolations } from "./rules.js";
export * from "./types.js";
