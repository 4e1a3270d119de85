export { type EventsCapability, eventsCapabilities, readEventsCapability } from "./capability.js";
export { compact, parseOrInvalid } from "./common.js";
export { DIALECTS, detectRequestDialect, detectResultDialect, dialect } from "./detect.js";
export type { Codec, DialectName, EventsDialect, SignatureScheme } from "./dialect.js";
export { sep3415, sepSchemas, WHSEC } from "./dialects/sep-3415.js";
export { sketch, sketchSchemas } from "./dialects/sketch.js";
export {
  EVENTS_ERROR_CODES,
  EventsError,
  type EventsErrorName,
  eventsErrorName,
  isEventsError,
  toMcpError,
  WireError,
} from "./errors.js";
export { EVENTS_EXTENSION, EVENTS_METHODS, EVENTS_NOTIFICATIONS, SUBSCRIPTION_ID_META } from "./methods.js";
export * from "./model.js";
