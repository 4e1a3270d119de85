/** intent_search_offers: the catalogue by words; a seller's reply is never shown here. */
import { searchInput, searchOut } from "@doorbell/intents";
import { success } from "@doorbell/intents/server";
import { offerView } from "../views.js";
import { readOnly, type ToolContext, type ToolRegistrar } from "./context.js";

const DEFAULT_SEARCH_LIMIT = 20;

export function registerSearchOffers(tool: ToolRegistrar, { services }: ToolContext): void {
  tool(
    "intent_search_offers",
    {
      title: "Search the catalogue",
      description:
        "Searches this holder's catalogue by words (full text), newest first, as { offers: [...] }. Public: no sign-in needed.",
      inputSchema: searchInput,
      outputSchema: searchOut,
      annotations: readOnly,
    },
    async (args) => {
      const offers = await services.offers.search(args.statement, args.limit ?? DEFAULT_SEARCH_LIMIT);
      // The catalogue only: a seller's reply is for the one buyer it answers.
      return success({ offers: offers.filter((offer) => offer.source.kind === "catalogue").map(offerView) });
    },
  );
}
