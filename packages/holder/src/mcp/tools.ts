/**
 * The eight intent_* tools of the Isto Intents MCP binding 0.1 with the consent-link profile, and
 * the push profile's two, one module each (tools/); this registry puts them on a server in the
 * order tools/list shows them.
 *
 * The auth seam: every buyer tool turns its caller into one `Principal` in `buyerPrincipal` and
 * hands only that to the services. Today the principal comes from the `intentCode` argument
 * (consent-link rule 4, via `IntentService.principalForCode`). OAuth arrives through the same
 * function: the HTTP layer verifies a bearer token and passes the SDK's `AuthInfo`, which becomes
 * `{ kind: "oauth", subject, clientId }` (`principalFromAuth`); the services decide what an OAuth
 * principal may do. No tool looks at a token or a code anywhere else.
 */

import { AGGREGATOR_NOTE } from "@doorbell/intents";
import { registerTool, type ToolGuard } from "@doorbell/intents/server";
import { isDatabaseBusy } from "@doorbell/store";
import type { McpServer } from "@modelcontextprotocol/server";
import type { ToolContext, ToolRegistrar } from "./tools/context.js";
import { registerDemandSummary } from "./tools/demand-summary.js";
import { registerGetIntent } from "./tools/get-intent.js";
import { registerListMatches } from "./tools/list-matches.js";
import { registerPublishIntent } from "./tools/publish-intent.js";
import { registerSearchOffers } from "./tools/search-offers.js";
import { registerSubmitOffer } from "./tools/submit-offer.js";
import { registerSubscribeEvents } from "./tools/subscribe-events.js";
import { registerUnsubscribeEvents } from "./tools/unsubscribe-events.js";
import { registerUpdateIntent } from "./tools/update-intent.js";
import { registerWithdrawIntent } from "./tools/withdraw-intent.js";

export type { HolderToolServices, ToolContext } from "./tools/context.js";

export function registerHolderTools(server: McpServer, context: ToolContext): void {
  const guard: ToolGuard = {
    ...(context.limit === undefined ? {} : { limit: context.limit }),
    ...(context.observe === undefined ? {} : { observe: context.observe }),
    note: AGGREGATOR_NOTE,
    log: context.log,
    failedEvent: "mcp.tool.failed",
    isBusy: isDatabaseBusy,
  };
  const tool: ToolRegistrar = (name, config, run) => {
    if (context.only !== undefined && context.only !== name) return;
    registerTool(server, guard, name, config, (args, extra) => run(args, extra.authInfo, extra));
  };

  registerPublishIntent(tool, context);
  registerGetIntent(tool, context);
  registerUpdateIntent(tool, context);
  registerWithdrawIntent(tool, context);
  registerListMatches(tool, context);
  registerDemandSummary(tool, context);
  registerSubmitOffer(tool, context);
  registerSearchOffers(tool, context);

  const push = context.services.push;
  if (push === undefined) return;
  registerSubscribeEvents(tool, context, push);
  registerUnsubscribeEvents(tool, context, push);
}
