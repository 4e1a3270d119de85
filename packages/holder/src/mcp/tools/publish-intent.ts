/** intent_publish_intent: a draft the person confirms on the holder's own page (or, signed in, at once). */
import { publishInput, publishOut } from "@doorbell/intents";
import { success } from "@doorbell/intents/server";
import { principalFromAuth } from "../principal.js";
import { intentView } from "../views.js";
import type { ToolContext, ToolRegistrar } from "./context.js";

export function registerPublishIntent(tool: ToolRegistrar, { services }: ToolContext): void {
  tool(
    "intent_publish_intent",
    {
      title: "Publish what a person wants to buy",
      description:
        "Publishes a draft intent: what the person wants to buy, where, for how much. It takes no contact data at all (no e-mail, phone or name). " +
        "area is required here (at least its country): it decides which offers can match. " +
        "It returns the intent, an intentCode and a consentUrl on this holder's own site. Give the consentUrl to the person: " +
        "they open it, enter their own e-mail, read the consent text and confirm by e-mail; only then is the intent active and matched. " +
        "Do not open, fill in or submit that page for them. Keep the intentCode secret: it reads the intent, lists its matches and withdraws it. " +
        "A draft is never matched or counted and ends within 24 hours if nobody confirms it.",
      inputSchema: publishInput,
      outputSchema: publishOut,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    async (args, authInfo) => {
      // With a verified token the intent is the signed-in person's at once (no consent link).
      const signedIn = principalFromAuth(authInfo);
      if (signedIn !== undefined && services.intents.publishSignedIn !== undefined) {
        const published = await services.intents.publishSignedIn(signedIn, args);
        return success(
          { intent: intentView(published.intent), intentCode: published.intentCode },
          "The intent is active for the signed-in person; the holder e-mailed them its manage link. " +
            "Read it and its matches with the id while signed in, or with the intentCode.",
        );
      }
      const published = await services.intents.publish(args);
      return success(
        {
          intent: intentView(published.intent),
          intentCode: published.intentCode,
          consentUrl: published.consentUrl,
        },
        `Give the person this link to confirm the intent themselves: ${published.consentUrl} — do not open it for them. ` +
          "Keep the intentCode to check matches later with intent_list_matches.",
      );
    },
  );
}
