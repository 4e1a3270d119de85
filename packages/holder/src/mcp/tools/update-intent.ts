/** intent_update_intent: changes for a signed-in person; validUntil alone only offers a renewal. */
import { intentOut, updateInput } from "@doorbell/intents";
import { success } from "@doorbell/intents/server";
import { HolderError } from "../../model/types.js";
import { buyerPrincipal, NEEDS_SIGN_IN } from "../principal.js";
import { intentView } from "../views.js";
import type { ToolContext, ToolRegistrar } from "./context.js";

export function registerUpdateIntent(tool: ToolRegistrar, { services }: ToolContext): void {
  tool(
    "intent_update_intent",
    {
      title: "Change an intent",
      description:
        "Changes an intent's statement, criteria, budget, hidden limit or buyBy. It needs the person signed in (OAuth, where this holder offers it): " +
        "an intentCode cannot change an intent (consent-link rule 4), so withdraw it and publish a new one instead. " +
        "validUntil is not renewed by an agent: renewing needs the person's own fresh action. Sent alone, validUntil offers the renewal to the person " +
        "(the holder mails them; nothing changes until they accept on their page), and the answer says so under extensions.renewal.",
      inputSchema: updateInput,
      outputSchema: intentOut,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    async (args, authInfo) => {
      const { id, intentCode, validUntil, ...changes } = args;
      const principal = await buyerPrincipal(services.intents, intentCode, authInfo, NEEDS_SIGN_IN);
      if (validUntil === undefined) {
        return success(intentView(await services.intents.update(principal, id, changes)));
      }
      // A renewal is offered to the person, never made by the agent.
      if (Object.keys(changes).length > 0) {
        throw new HolderError(
          "ERR_HOLDER_INVALID",
          "validUntil goes alone: it only offers the renewal to the person; send the other changes in another call",
        );
      }
      const renewal = await services.intents.offerRenewal(principal, id, validUntil);
      const intent = await services.intents.get(principal, id);
      return success(
        { ...intentView(intent), extensions: { renewal } },
        `The person was mailed an offer to renew this intent until ${renewal.validUntil.slice(0, 10)}. validUntil changes only if they accept it on the holder's page; do not open that page for them.`,
      );
    },
  );
}
