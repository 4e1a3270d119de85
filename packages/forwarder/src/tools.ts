/**
 * The forwarder's MCP tools: the holder's eight intent_* tools with the holder's own input schemas,
 * plus intent_subscribe_events / intent_unsubscribe_events (push profile §4, §7).
 *
 * Every call goes to the upstream holder through the SDK client. A buyer tool's forwarder code is
 * swapped for the holder's code (opened with it, records.ts) and never leaves towards the holder;
 * the holder's code never reaches the agent. Holder results pass through unchanged, except
 * publish (the agent gets the forwarder code) and the push tools (the forwarder's subscriptionId).
 */

import {
  AGGREGATOR_NOTE,
  BUDGET_BANDS,
  COUNTRIES,
  type DemandGrid,
  demandInput,
  demandOut,
  getInput,
  intentOut,
  listMatchesInput,
  listMatchesOut,
  PUSH_TOOL_NAMES,
  publishInput,
  publishOut,
  regionsOf,
  searchInput,
  searchOut,
  submitOfferInput,
  submitOfferOut,
  TOOL_NAMES,
  updateInput,
  withdrawInput,
  withdrawOut,
} from "@doorbell/intents";
import { refusal, registerTool, success, type ToolConfig, type ToolGuard } from "@doorbell/intents/server";
import type { CallLimit } from "@doorbell/mcp-endpoint";
import { isDatabaseBusy } from "@doorbell/store";
import {
  type CallToolResult,
  type McpServer,
  ProtocolError,
  type ToolAnnotations,
} from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { ForwarderContext } from "./context.js";
import { createRecord, deleteRecord, openRecord } from "./records.js";
import { pushSubscriptionOut, subscribeInput, unsubscribeInput } from "./schemas.js";
import { type HolderAnswer, notFound, type PushSide } from "./subscriptions.js";
import { UpstreamError } from "./upstream.js";

/** The holder's eight tools and its two push tools, under the same names. */
export const FORWARDER_TOOL_NAMES = [...TOOL_NAMES, ...PUSH_TOOL_NAMES] as const;
type ToolName = (typeof FORWARDER_TOOL_NAMES)[number];

/** The Doorbell holder's demand grid (its cells are the same enums whoever runs the holder). */
export const FORWARDED_GRID: DemandGrid = {
  threshold: 5,
  categories: ["vehicles", "property"],
  countries: [...COUNTRIES],
  regions: Object.fromEntries(COUNTRIES.map((country) => [country, regionsOf(country).map((r) => r.code)])),
  budgetBands: BUDGET_BANDS.map((band) => ({ ...band, currency: band.currency ?? "none" })),
};

const FORWARDER_NOTE =
  "This server is a forwarder: it passes each call to the intent holder behind it and keeps the holder's own code sealed under yours.";

export interface ForwarderToolContext {
  ctx: ForwarderContext;
  push: PushSide;
  /** The calling client's tool-call allowance; none, no limit. */
  limit?: CallLimit;
}

const readOnly: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
const writes = (destructive: boolean, idempotent: boolean): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: false,
});

const pushResult = (answer: HolderAnswer): CallToolResult =>
  "refused" in answer ? answer.refused : success(answer.subscription);

export function registerForwarderTools(server: McpServer, tc: ForwarderToolContext): void {
  const { ctx, push } = tc;

  const guard: ToolGuard = {
    ...(tc.limit === undefined ? {} : { limit: tc.limit }),
    note: `${FORWARDER_NOTE} ${AGGREGATOR_NOTE}`,
    log: ctx.log,
    failedEvent: "forwarder.tool_failed",
    isBusy: isDatabaseBusy,
    refuse: upstreamRefusal,
  };
  /** Registers one tool behind the binding's guard (`registerTool`); a test call stays a test call upstream (§6 rule 9). */
  function tool<S extends z.ZodObject>(
    name: ToolName,
    config: ToolConfig<S> & { outputSchema: z.ZodObject },
    run: (args: z.infer<S>) => Promise<CallToolResult>,
  ): void {
    registerTool(server, guard, name, config, (args, extra) =>
      extra.header("x-isto-test")?.trim() === "1"
        ? ctx.upstream.withHeaders({ "x-isto-test": "1" }, () => run(args))
        : run(args),
    );
  }

  /** Opens the holder's code for a buyer call; forgets the record when the holder no longer knows it. */
  async function withHolderCode(
    forwarderCode: string,
    call: (holderCode: string) => Promise<CallToolResult>,
  ): Promise<CallToolResult> {
    const record = await openRecord(ctx, forwarderCode);
    if (record === undefined) throw notFound();
    const result = await call(record.holderCode);
    if (result.isError === true && errorCode(result) === "ERR_HOLDER_NOT_FOUND")
      await deleteRecord(ctx, record.id);
    return result;
  }

  const pass = (name: ToolName) => (args: Record<string, unknown>) => ctx.upstream.call(name, args);

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

  tool(
    "intent_demand_summary",
    {
      title: "Count active intents in one cell of the demand grid",
      description:
        "How many active intents the holder has in one cell of its band grid; small cells are withheld. Public.",
      inputSchema: demandInput(FORWARDED_GRID),
      outputSchema: demandOut,
      annotations: readOnly,
    },
    pass("intent_demand_summary"),
  );

  tool(
    "intent_submit_offer",
    {
      title: "Reply to a pseudonymous intent with an offer",
      description:
        "A seller's offer in reply to one pseudonymous intent at the holder; the answer is only { accepted }.",
      inputSchema: submitOfferInput,
      outputSchema: submitOfferOut,
      annotations: writes(false, false),
    },
    pass("intent_submit_offer"),
  );

  tool(
    "intent_search_offers",
    {
      title: "Search the catalogue",
      description: "Searches the holder's catalogue by words. Public.",
      inputSchema: searchInput,
      outputSchema: searchOut,
      annotations: readOnly,
    },
    pass("intent_search_offers"),
  );

  tool(
    "intent_subscribe_events",
    {
      title: "Ring my doorbell when something changes",
      description:
        "Subscribes your endpoint (delivery.url, https on port 443 with a domain name) to doorbells for an intent: a signed Standard Webhooks POST saying " +
        "that there are new offers or that the status changed — never which offers; then call intent_list_matches with since. " +
        "Your endpoint must answer the challenge at once; the person then approves at the holder. The same code and url again renews.",
      inputSchema: subscribeInput,
      outputSchema: pushSubscriptionOut,
      annotations: writes(false, true),
    },
    async (args) => pushResult(await push.subscribe(args)),
  );

  tool(
    "intent_unsubscribe_events",
    {
      title: "Stop ringing my doorbell",
      description: "Ends a doorbell subscription, here and at the holder.",
      inputSchema: unsubscribeInput,
      outputSchema: pushSubscriptionOut,
      annotations: writes(true, true),
    },
    async (args) => pushResult(await push.unsubscribe(args)),
  );
}

/** The upstream holder unreachable, or refusing the call as a protocol error. */
function upstreamRefusal(error: unknown): CallToolResult | undefined {
  if (error instanceof UpstreamError) {
    return refusal(
      { code: "ERR_HOLDER_UNAVAILABLE" },
      "the intent holder behind this forwarder could not be reached; nothing was changed here, try again later",
    );
  }
  if (error instanceof ProtocolError) {
    return refusal(
      { code: "ERR_HOLDER_INVALID" },
      `the intent holder refused the call: ${error.message.slice(0, 300)}`,
    );
  }
  return undefined;
}

function errorCode(result: CallToolResult): string | undefined {
  const meta = result._meta?.["io.doorbell/error"] as { code?: unknown } | undefined;
  return typeof meta?.code === "string" ? meta.code : undefined;
}
