/** intent_list_matches: the offers delivered for one intent, oldest first, read with `since`. */
import { listMatchesInput, listMatchesInputSignedIn, listMatchesOut } from "@doorbell/intents";
import { success } from "@doorbell/intents/server";
import { HolderError } from "../../model/types.js";
import { buyerPrincipal } from "../principal.js";
import { matchView } from "../views.js";
import { readOnly, signedInWayOf, type ToolContext, type ToolRegistrar } from "./context.js";

export function registerListMatches(tool: ToolRegistrar, context: ToolContext): void {
  const { services } = context;
  const signedInWay = signedInWayOf(context);
  tool(
    "intent_list_matches",
    {
      title: "List the offers delivered for an intent",
      description:
        `Lists the offers this holder has delivered for an intent (named by its intentCode${signedInWay}), oldest first, as { matches: [{ offer, deliveredAt }] }. ` +
        "Pass since (the last deliveredAt you saw) to get only newer ones; an empty answer is cheap, so poll with since. " +
        "One answer holds at most about 1,000 matches; extensions.more: true says to call again with since = the last deliveredAt. " +
        "Delivery to the person's own e-mail continues independently.",
      inputSchema: context.signedIn === true ? listMatchesInputSignedIn : listMatchesInput,
      outputSchema: listMatchesOut,
      annotations: readOnly,
    },
    async (args, authInfo) => {
      const principal = await buyerPrincipal(services.intents, args.intentCode, authInfo);
      const named = namedIntent(args);
      const { matches, more } = await services.matches.listMatches(principal, named, args.since);
      const intentId = principal.kind === "intent-code" ? principal.intentId : named;
      // A reply belongs to the intent it answers: never show one to another buyer (rule 1).
      const own = matches.filter(
        (match) => match.offer.inReplyTo === undefined || match.offer.inReplyTo === intentId,
      );
      const nextCheckAfter = context.nextCheckAfter?.();
      return success({
        matches: own.map(matchView),
        // The binding puts what a holder adds under extensions; §8.2 names nextCheckAfter itself.
        ...(more === true ? { extensions: { more: true } } : {}),
        ...(nextCheckAfter === undefined ? {} : { nextCheckAfter }),
      });
    },
  );
}

/** The intent a list_matches call names by id (or by the binding's `intent`); both must agree. */
function namedIntent(args: { id?: string; intent?: string }): string | undefined {
  if (args.id !== undefined && args.intent !== undefined && args.id !== args.intent) {
    throw new HolderError("ERR_HOLDER_INVALID", "id and intent name the same intent: send one of them");
  }
  return args.id ?? args.intent;
}
