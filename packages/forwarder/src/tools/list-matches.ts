/** intent_list_matches, forwarded to the holder behind this forwarder. */
import { listMatchesInput, listMatchesOut } from "@doorbell/intents";
import { type ForwarderToolKit, readOnly } from "./kit.js";

export function registerListMatches({ pass, tool, withHolderCode }: ForwarderToolKit): void {
  tool(
    "intent_list_matches",
    {
      title: "List the offers delivered for an intent",
      description:
        "Lists the offers the holder delivered for an intent, oldest first; pass since (the last deliveredAt you saw) to get only newer ones. " +
        "extensions.more: true says to call again with since = the last deliveredAt. After a doorbell, call this with since.",
      inputSchema: listMatchesInput,
      outputSchema: listMatchesOut,
      annotations: readOnly,
    },
    (args) =>
      withHolderCode(args.intentCode, (intentCode) => pass("intent_list_matches")({ ...args, intentCode })),
  );
}
