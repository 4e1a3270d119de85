/** intent_search_offers, forwarded to the holder behind this forwarder. */
import { searchInput, searchOut } from "@doorbell/intents";
import { type ForwarderToolKit, readOnly } from "./kit.js";

export function registerSearchOffers({ pass, tool }: ForwarderToolKit): void {
  tool(
    "intent_search_offers",
    {
      title: "Search the catalogue",
      description: "Searches the holder's catalogue by words. Public.",
      inputSchema: searchInput,
      outputSchema: searchOut,
      annotations: readOnly,
    },
    pass("intent_search_offers"),
  );
}
