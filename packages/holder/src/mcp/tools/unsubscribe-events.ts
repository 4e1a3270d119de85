/** intent_unsubscribe_events (push profile §4): ends one subscription at once. */
import { pushSubscriptionOut, unsubscribeInput } from "@doorbell/intents";
import { success } from "@doorbell/intents/server";
import type { PushService } from "../../push/service.js";
import { buyerPrincipal } from "../principal.js";
import type { ToolContext, ToolRegistrar } from "./context.js";

export function registerUnsubscribeEvents(
  tool: ToolRegistrar,
  { services }: ToolContext,
  push: PushService,
): void {
  tool(
    "intent_unsubscribe_events",
    {
      title: "Stop notifications for an intent",
      description:
        "Push profile 0.4: ends one notification subscription of the intent at once. Matches stay readable with intent_list_matches.",
      inputSchema: unsubscribeInput,
      outputSchema: pushSubscriptionOut,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args, authInfo) => {
      const principal = await buyerPrincipal(services.intents, args.intentCode, authInfo);
      return success(await push.unsubscribe(principal, args.subscriptionId));
    },
  );
}
