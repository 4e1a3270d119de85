// The binding's tool names, the same on a holder and on a forwarder in front of one.

/** Binding 0.1: the eight intent_* tools. */
export const TOOL_NAMES = [
  "intent_publish_intent",
  "intent_get_intent",
  "intent_update_intent",
  "intent_withdraw_intent",
  "intent_list_matches",
  "intent_demand_summary",
  "intent_submit_offer",
  "intent_search_offers",
] as const;
/** Push profile §4: declared beside the eight when the holder offers `push`. */
export const PUSH_TOOL_NAMES = ["intent_subscribe_events", "intent_unsubscribe_events"] as const;
export type ToolName = (typeof TOOL_NAMES)[number] | (typeof PUSH_TOOL_NAMES)[number];
