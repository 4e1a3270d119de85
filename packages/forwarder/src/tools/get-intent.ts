/** intent_get_intent, forwarded to the holder behind this forwarder. */
import { getInput, intentOut } from "@doorbell/intents";
import { type ForwarderToolKit, readOnly } from "./kit.js";

export function registerGetIntent({ pass, tool, withHolderCode }: ForwarderToolKit): void {
  tool(
    "intent_get_intent",
    {
      title: "Read an intent",
      description: "Reads an intent with the intentCode this forwarder gave (fc_…).",
      inputSchema: getInput,
      outputSchema: intentOut,
      annotations: readOnly,
    },
    (args) =>
      withHolderCode(args.intentCode, (intentCode) => pass("intent_get_intent")({ ...args, intentCode })),
  );
}
