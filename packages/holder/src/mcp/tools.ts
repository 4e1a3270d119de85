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
import { guardedCall, registerTool, type ToolGuard } from "@doorbell/intents/server";
import type { QuickTool, QuickTools } from "@doorbell/mcp-endpoint";
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
  const guard = toolGuard(context);
  registerEach(context, (name, config, run) => {
    if (context.only !== undefined && context.only !== name) return;
    registerTool(server, guard, name, config, (args, extra) => run(args, extra.authInfo, extra));
  });
}

/** The tools a plain modern call of is answered beside the SDK: the pull agents make most. */
const QUICK_TOOL_NAMES: ReadonlySet<string> = new Set(["intent_list_matches"]);

/**
 * The quick tools (@doorbell/mcp-endpoint's quick call) over the same tool modules: each call
 * validated by the tool's own input schema, run behind the same guard with the request's limit,
 * and its output checked as the SDK checks it. `context` is the per-process part (no limit).
 */
export function holderQuickTools(context: Omit<ToolContext, "limit" | "observe" | "only">): QuickTools {
  const tools = new Map<string, QuickTool>();
  const processGuard = toolGuard(context);
  registerEach(context, (name, config, run) => {
    if (!QUICK_TOOL_NAMES.has(name)) return;
    const output = config.outputSchema;
    tools.set(name, (args) => {
      const parsed = config.inputSchema.safeParse(args);
      if (!parsed.success) return undefined;
      return async (scope, header) => {
        // Only the request's limit and observer differ from the process's guard.
        const guard: ToolGuard = {
          ...processGuard,
          ...(scope.limit === undefined ? {} : { limit: scope.limit }),
          ...(scope.observe === undefined ? {} : { observe: scope.observe }),
        };
        const call = guardedCall(guard, name, (valid: typeof parsed.data, extra) =>
          run(valid, extra.authInfo, extra),
        );
        const result = await call(parsed.data, { header });
        if (output === undefined || result.isError === true) return result;
        // The SDK's output check, with its words: a tool error, not a JSON-RPC error.
        if (result.structuredContent === undefined) {
          throw new Error(
            `Output validation error: Tool ${name} has an output schema but no structured content was provided`,
          );
        }
        const checked = output.safeParse(result.structuredContent);
        if (!checked.success) {
          throw new Error(
            `Output validation error: Invalid structured content for tool ${name}: ${checked.error.message}`,
          );
        }
        return result;
      };
    });
  });
  return tools;
}

function toolGuard(context: Pick<ToolContext, "limit" | "observe" | "log">): ToolGuard {
  return {
    ...(context.limit === undefined ? {} : { limit: context.limit }),
    ...(context.observe === undefined ? {} : { observe: context.observe }),
    note: AGGREGATOR_NOTE,
    log: context.log,
    failedEvent: "mcp.tool.failed",
    isBusy: isDatabaseBusy,
  };
}

/** Every tool module, in the order tools/list shows them, through `tool`. */
function registerEach(context: Omit<ToolContext, "limit" | "observe" | "only">, tool: ToolRegistrar): void {
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
