/** intent_subscribe_events (push profile §4): a doorbell subscription, proved and then allowed by the person. */
import { pushSubscriptionOut, subscribeInput } from "@doorbell/intents";
import { type CallExtra, success } from "@doorbell/intents/server";
import type { PushService } from "../../push/service.js";
import { buyerPrincipal } from "../principal.js";
import type { ToolContext, ToolRegistrar } from "./context.js";

export function registerSubscribeEvents(tool: ToolRegistrar, context: ToolContext, push: PushService): void {
  const { services } = context;
  tool(
    "intent_subscribe_events",
    {
      title: "Ask to be notified when an intent has new matches",
      description:
        "Push profile 0.4: asks this holder to ring your endpoint (a signed Standard Webhooks POST) when an intent gets new matches or changes status. " +
        "The notification carries no offer, link or code: on each one, read the matches with intent_list_matches and since. " +
        "delivery.url must be https on port 443 with a domain name; delivery.secret is your whsec_ secret. The holder first proves the endpoint with a " +
        "subscription.verification challenge (answer 200 with the same challenge), then the person allows it on the holder's own page or from an e-mail " +
        "(never through you). Calling again with the same intentCode and url renews it (same subscriptionId, new lease, the new secret after its challenge): " +
        "do so before refreshBefore. At most 3 subscriptions per intent. relayFor: a forwarder names the host it relays to.",
      inputSchema: subscribeInput,
      outputSchema: pushSubscriptionOut,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async (args, authInfo, extra) => {
      const principal = await buyerPrincipal(services.intents, args.intentCode, authInfo);
      const view = await push.subscribe(principal, {
        delivery: args.delivery,
        ...(args.events === undefined ? {} : { events: args.events }),
        ...(args.relayFor === undefined ? {} : { relayFor: args.relayFor }),
        test: isTestCall(extra),
      });
      context.onSubscribed?.(view.subscriptionId, principal);
      return success(view, subscriptionNote(view));
    },
  );
}

/** Push profile §6 rule 9: a test call carries `x-isto-test: 1`. */
function isTestCall(extra: CallExtra): boolean {
  return extra.header("x-isto-test")?.trim() === "1";
}

/** One plain sentence for the agent about what happens next. */
function subscriptionNote(view: { status: string; approval?: string }): string {
  if (view.status === "ended") return "This subscription has ended.";
  const approval =
    view.approval === "on-consent-page"
      ? "the person allows it on the consent page, as a separate choice"
      : view.approval === "sent-to-verified-channel"
        ? "the holder e-mails the person a link to allow it"
        : "no approval is needed for a test call";
  return `First the holder sends a subscription.verification challenge to your endpoint; then ${approval}. Until then nothing else is sent; keep reading intent_list_matches.`;
}
