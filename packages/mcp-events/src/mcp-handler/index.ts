export {
  type EmitOptions,
  type McpHandlerEvents,
  McpHandlerEventsError,
  type McpHandlerEventsOptions,
  type McpHandlerEventsTables,
  mcpHandlerEvents,
} from "./binding.js";
export {
  type McpHandlerSubscriptionRow,
  type McpHandlerTables,
  mcpHandlerMigrations,
} from "./subscription-rows.js";
