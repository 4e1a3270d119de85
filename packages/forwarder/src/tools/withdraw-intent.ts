/** intent_withdraw_intent, forwarded to the holder behind this forwarder. */
import { withdrawInput, withdrawOut } from "@doorbell/intents";
import { type ForwarderToolKit, writes } from "./kit.js";

export function registerWithdrawIntent({ pass, push, tool, withHolderCode }: ForwarderToolKit): void {
  tool(
    "intent_withdraw_intent",
    {
      title: "Withdraw an intent",
      description:
        "Withdraws an intent with the intentCode this forwarder gave. It takes effect immediately and ends its doorbell subscriptions.",
      inputSchema: withdrawInput,
      outputSchema: withdrawOut,
      annotations: writes(true, true),
    },
    async (args) => {
      const result = await withHolderCode(args.intentCode, (intentCode) =>
        pass("intent_withdraw_intent")({ ...args, intentCode }),
      );
      if (result.isError !== true) await push.endAllFor(args.intentCode, "intent-withdrawn");
      return result;
    },
  );
}
