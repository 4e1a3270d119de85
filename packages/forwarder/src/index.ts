// @doorbell/forwarder: the forwarder of push profile §7, an MCP server between an agent and an intent holder.
export { FORWARDER_CODE, isForwarderCode, openUnderCode, relayPathFor, sealUnderCode } from "./codes.js";
export type { ForwarderContext, ForwarderDb } from "./context.js";
export { ForwarderError, type ForwarderErrorCode } from "./errors.js";
export {
  type CreateForwarderOptions,
  createForwarder,
  type Forwarder,
  type ForwarderSummary,
} from "./forwarder.js";
export { RELAY_PREFIX } from "./relay-endpoint.js";
export { type ForwarderTables, forwarderMigrations, type RelayRow } from "./schema.js";
export { FORWARDER_TOOL_NAMES } from "./tools.js";
export { createUpstream, type Upstream } from "./upstream.js";
