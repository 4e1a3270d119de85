// @doorbell/intents/server: what a server of the binding needs beyond the wire: one guard for every
// tool and the shapes of its results (success, refusal, rate limited, busy, internal error).

export {
  BUSY_RETRY_AFTER_SECONDS,
  busy,
  ERROR_META_KEY,
  internalError,
  rateLimited,
  refusal,
  refusalFor,
  success,
  type ToolErrorMeta,
} from "./server/results.js";
export { type CallExtra, guardedCall, registerTool, type ToolConfig, type ToolGuard } from "./server/tool.js";
