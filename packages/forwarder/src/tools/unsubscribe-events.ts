/** intent_unsubscribe_events, forwarded to the holder behind this forwarder. */
import { pushSubscriptionOut, unsubscribeInput } from "../schemas.js";
import { type ForwarderToolKit, pushResult, writes } from "./kit.js";

export function registerUnsubscribeEvents({ push, tool }: ForwarderToolKit): void {
  tool(
    "intent_unsubscribe_events",
    {
      title: "Stop ringing my doorbell",
      description: "Ends a doorbell subscription, here and at the holder.",
      inputSchema: unsubscribeInput,
      outputSchema: pushSubscriptionOut,
      annotations: writes(true, true),
    },
    async (args) => pushResult(await push.unsubscribe(args)),
  );
}
