/**
 * The forwarder's MCP tools: the holder's eight intent_* tools with the holder's own input schemas,
 * plus intent_subscribe_events / intent_unsubscribe_events (push profile §4, §7), one module each
 * (tools/); this registry puts them on a server in the order tools/list shows them.
 *
 * Every call goes to the upstream holder through the SDK client. A buyer tool's forwarder code is
 * swapped for the holder's code (opened with it, records.ts) and never leaves towards the holder;
 * the holder's code never reaches the agent. Holder results pass through unchanged, except
 * publish (the agent gets the forwarder code) and the push tools (the forwarder's subscriptionId).
 */

import { AGGREGATOR_NOTE, PUSH_TOOL_NAMES, TOOL_NAMES } from "@doorbell/intents";
import { refusal, registerTool, type ToolGuard } from "@doorbell/intents/server";
import type { CallLimit } from "@doorbell/mcp-endpoint";
import { isDatabaseBusy } from "@doorbell/store";
import { type CallToolResult, type McpServer, ProtocolError } from "@modelcontextprotocol/server";
import type { ForwarderContext } from "./context.js";
import { ForwarderError } from "./errors.js";
import { deleteRecord, openRecord } from "./records.js";
import { notFound, type PushSide } from "./subscriptions.js";
import { registerDemandSummary } from "./tools/demand-summary.js";
import { registerGetIntent } from "./tools/get-intent.js";
import type { ForwarderRegistrar, ForwarderToolKit } from "./tools/kit.js";
import { registerListMatches } from "./tools/list-matches.js";
import { registerPublishIntent } from "./tools/publish-intent.js";
import { registerSearchOffers } from "./tools/search-offers.js";
import { registerSubmitOffer } from "./tools/submit-offer.js";
import { registerSubscribeEvents } from "./tools/subscribe-events.js";
import { registerUnsubscribeEvents } from "./tools/unsubscribe-events.js";
import { registerUpdateIntent } from "./tools/update-intent.js";
import { registerWithdrawIntent } from "./tools/withdraw-intent.js";

/** The holder's eight tools and its two push tools, under the same names. */
export const FORWARDER_TOOL_NAMES = [...TOOL_NAMES, ...PUSH_TOOL_NAMES] as const;

const FORWARDER_NOTE =
  "This server is a forwarder: it passes each call to the intent holder behind it and keeps the holder's own code sealed under yours.";

export interface ForwarderToolContext {
  ctx: ForwarderContext;
  push: PushSide;
  /** The calling client's tool-call allowance; none, no limit. */
  limit?: CallLimit;
}

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
  const tool: ForwarderRegistrar = (name, config, run) => {
    registerTool(server, guard, name, config, (args, extra) =>
      extra.header("x-isto-test")?.trim() === "1"
        ? ctx.upstream.withHeaders({ "x-isto-test": "1" }, () => run(args))
        : run(args),
    );
  };
  const kit: ForwarderToolKit = {
    ctx,
    push,
    tool,
    async withHolderCode(forwarderCode, call) {
      const record = await openRecord(ctx, forwarderCode);
      if (record === undefined) throw notFound();
      const result = await call(record.holderCode);
      if (result.isError === true && errorCode(result) === "ERR_HOLDER_NOT_FOUND")
        await deleteRecord(ctx, record.id);
      return result;
    },
    pass: (name) => (args) => ctx.upstream.call(name, args),
  };

  registerPublishIntent(kit);
  registerGetIntent(kit);
  registerUpdateIntent(kit);
  registerWithdrawIntent(kit);
  registerListMatches(kit);
  registerDemandSummary(kit);
  registerSubmitOffer(kit);
  registerSearchOffers(kit);
  registerSubscribeEvents(kit);
  registerUnsubscribeEvents(kit);
}

/** The upstream holder unreachable, or refusing the call as a protocol error. */
function upstreamRefusal(error: unknown): CallToolResult | undefined {
  if (error instanceof ForwarderError && error.code === "ERR_FORWARDER_UPSTREAM") {
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
