/** intent_publish_intent, forwarded to the holder behind this forwarder. */
import { publishInput, publishOut } from "@doorbell/intents";
import { success } from "@doorbell/intents/server";
import { createRecord } from "../records.js";
import { type ForwarderToolKit, writes } from "./kit.js";

export function registerPublishIntent({ ctx, tool }: ForwarderToolKit): void {
  tool(
    "intent_publish_intent",
    {
      title: "Publish what a person wants to buy",
      description:
        "Publishes a draft intent at the holder behind this forwarder; it takes no contact data. Returns the intent, an intentCode (fc_…, keep it secret: " +
        "it reads the intent, lists its matches, withdraws it and subscribes to doorbells) and a consentUrl on the holder's own site. " +
        "Give the consentUrl to the person; do not open it for them.",
      inputSchema: publishInput,
      outputSchema: publishOut,
      annotations: writes(false, false),
    },
    async (args) => {
      const result = await ctx.upstream.call("intent_publish_intent", args);
      if (result.isError === true) return result;
      const published = publishOut.safeParse(result.structuredContent);
      if (!published.success)
        throw new Error("the holder answered intent_publish_intent with an unexpected shape");
      const holderCode = published.data.intentCode;
      const { forwarderCode } = await createRecord(ctx, holderCode);
      // The holder's other words (the note for the person) pass through, never a block with its code.
      const notes = result.content
        .slice(1)
        .filter((block) => block.type === "text" && !block.text.includes(holderCode))
        .map((block) => (block as { text: string }).text);
      return success(
        {
          intent: (result.structuredContent as { intent?: unknown } | undefined)?.intent,
          intentCode: forwarderCode,
          consentUrl: published.data.consentUrl,
        },
        notes.length > 0 ? notes.join("\n") : undefined,
      );
    },
  );
}
