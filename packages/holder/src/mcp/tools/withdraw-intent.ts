/** intent_withdraw_intent: ends an intent at once. */
import { withdrawInput, withdrawInputSignedIn, withdrawOut } from "@doorbell/intents";
import { success } from "@doorbell/intents/server";
import { buyerPrincipal } from "../principal.js";
import { signedInWayOf, type ToolContext, type ToolRegistrar } from "./context.js";

export function registerWithdrawIntent(tool: ToolRegistrar, context: ToolContext): void {
  const { services } = context;
  const signedInWay = signedInWayOf(context);
  tool(
    "intent_withdraw_intent",
    {
      title: "Withdraw an intent",
      description: `Withdraws an intent with its intentCode${signedInWay}. It takes effect immediately: nothing more is matched or delivered for it.`,
      inputSchema: context.signedIn === true ? withdrawInputSignedIn : withdrawInput,
      outputSchema: withdrawOut,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args, authInfo) => {
      const principal = await buyerPrincipal(services.intents, args.intentCode, authInfo);
      const { status } = await services.intents.withdraw(principal, args.id);
      return success({ status });
    },
  );
}
