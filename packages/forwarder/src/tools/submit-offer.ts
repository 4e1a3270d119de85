/** intent_submit_offer, forwarded to the holder behind this forwarder. */
import { submitOfferInput, submitOfferOut } from "@doorbell/intents";
import { type ForwarderToolKit, writes } from "./kit.js";

export function registerSubmitOffer({ pass, tool }: ForwarderToolKit): void {
  tool(
    "intent_submit_offer",
    {
      title: "Reply to a pseudonymous intent with an offer",
      description:
        "A seller's offer in reply to one pseudonymous intent at the holder; the answer is only { accepted }.",
      inputSchema: submitOfferInput,
      outputSchema: submitOfferOut,
      annotations: writes(false, false),
    },
    pass("intent_submit_offer"),
  );
}
