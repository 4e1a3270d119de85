/** intent_submit_offer: a seller's reply to one pseudonymous intent; the seller learns only { accepted }. */
import { submitOfferInput, submitOfferOut } from "@doorbell/intents";
import { success } from "@doorbell/intents/server";
import type { ToolContext, ToolRegistrar } from "./context.js";

export function registerSubmitOffer(tool: ToolRegistrar, { services }: ToolContext): void {
  tool(
    "intent_submit_offer",
    {
      title: "Reply to a pseudonymous intent with an offer",
      description:
        "A seller's offer in reply to one intent (inReplyTo: the intent's id). Only intents published with visibility pseudonymous accept replies. " +
        "The seller never receives anything about the buyer: the answer is only { accepted }.",
      inputSchema: submitOfferInput,
      outputSchema: submitOfferOut,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    async (args) => {
      const { accepted } = await services.offers.submitReply({
        inReplyTo: args.inReplyTo,
        source: {
          kind: "reply",
          ...(args.source?.ref === undefined ? {} : { ref: args.source.ref }),
          ...(args.source?.seller === undefined ? {} : { seller: args.source.seller }),
        },
        title: args.title,
        ...(args.description === undefined ? {} : { description: args.description }),
        category: args.category,
        price: args.price,
        location: args.location,
        ...(args.url === undefined ? {} : { url: args.url }),
        attributes: args.attributes ?? {},
      });
      return success({ accepted: accepted === true });
    },
  );
}
