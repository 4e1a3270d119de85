/** intent_get_intent: one intent, never its hidden limit's value or the person's contact. */
import { getInput, getInputSignedIn, intentOut } from "@doorbell/intents";
import { success } from "@doorbell/intents/server";
import { buyerPrincipal } from "../principal.js";
import { intentView } from "../views.js";
import { readOnly, signedInWayOf, type ToolContext, type ToolRegistrar } from "./context.js";

export function registerGetIntent(tool: ToolRegistrar, context: ToolContext): void {
  const { services } = context;
  const signedInWay = signedInWayOf(context);
  tool(
    "intent_get_intent",
    {
      title: "Read an intent",
      description: `Reads an intent with its intentCode${signedInWay}: statement, criteria, area, budget, status and whether a hidden limit is set (never its value, never the person's contact).`,
      inputSchema: context.signedIn === true ? getInputSignedIn : getInput,
      outputSchema: intentOut,
      annotations: readOnly,
    },
    async (args, authInfo) => {
      const principal = await buyerPrincipal(services.intents, args.intentCode, authInfo);
      return success(intentView(await services.intents.get(principal, args.id)));
    },
  );
}
