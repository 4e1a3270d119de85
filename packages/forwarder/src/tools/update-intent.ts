/** intent_update_intent, forwarded to the holder behind this forwarder. */
import { intentOut, updateInput } from "@doorbell/intents";
import { type ForwarderToolKit, writes } from "./kit.js";

export function registerUpdateIntent({ pass, tool, withHolderCode }: ForwarderToolKit): void {
  tool(
    "intent_update_intent",
    {
      title: "Change an intent",
      description:
        "Changes an intent; it needs the person signed in at the holder. An intentCode cannot change an intent (consent-link rule 4).",
      inputSchema: updateInput,
      outputSchema: intentOut,
      annotations: writes(false, true),
    },
    (args) =>
      args.intentCode === undefined
        ? pass("intent_update_intent")(args)
        : withHolderCode(args.intentCode, (intentCode) =>
            pass("intent_update_intent")({ ...args, intentCode }),
          ),
  );
}
