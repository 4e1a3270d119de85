/** intent_subscribe_events, forwarded to the holder behind this forwarder. */
import { pushSubscriptionOut, subscribeInput } from "../schemas.js";
import { type ForwarderToolKit, pushResult, writes } from "./kit.js";

export function registerSubscribeEvents({ push, tool }: ForwarderToolKit): void {
  tool(
    "intent_subscribe_events",
    {
      title: "Ring my doorbell when something changes",
      description:
        "Subscribes your endpoint (delivery.url, https on port 443 with a domain name) to doorbells for an intent: a signed Standard Webhooks POST saying " +
        "that there are new offers or that the status changed — never which offers; then call intent_list_matches with since. " +
        "Your endpoint must answer the challenge at once; the person then approves at the holder. The same code and url again renews.",
      inputSchema: subscribeInput,
      outputSchema: pushSubscriptionOut,
      annotations: writes(false, true),
    },
    async (args) => pushResult(await push.subscribe(args)),
  );
}
