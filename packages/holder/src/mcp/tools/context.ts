/** What every holder tool module is given: the services, the call's context and the registrar. */
import type { demandInput, ToolName } from "@doorbell/intents";
import type { CallExtra, ToolConfig } from "@doorbell/intents/server";
import type { CallLimit, ToolObserver } from "@doorbell/mcp-endpoint";
import type { AuthInfo, CallToolResult, ToolAnnotations } from "@modelcontextprotocol/server";
import type { Logger } from "pino";
import type { z } from "zod";
import type { DemandService, IntentService, MatchService, OfferService } from "../../model/services.js";
import type { Principal } from "../../model/types.js";
import type { PushService } from "../../push/service.js";

/** The services the tools call (the consent pages use `ConsentService`, the tools never do). */
export interface HolderToolServices {
  intents: IntentService;
  matches: MatchService;
  offers: OfferService;
  demand: DemandService;
  /** The push profile's two tools, when the holder declares `push`. */
  push?: PushService;
}

export interface ToolContext {
  services: HolderToolServices;
  /** `intent_demand_summary`'s schema, built once from the grid. */
  demandSchema: ReturnType<typeof demandInput>;
  /** The calling client's tool-call allowance; none, no limit. */
  limit?: CallLimit;
  /** Told of every tool call (metrics). */
  observe?: ToolObserver;
  /** Register only this tool (a stateless server answering one tools/call); default all. */
  only?: string;
  /** The session's subscriptions, for the `isto-intents://subscription/<id>` resource (§8.3). */
  onSubscribed?: (subscriptionId: string, principal: Principal) => void;
  /** §8.2: when an agent should look again at the earliest (default 15 minutes from now). */
  nextCheckAfter?: () => string;
  /** OAuth is on, so the buyer tools also take a token instead of the intentCode. */
  signedIn?: boolean;
  log: Logger;
}

/** Registers one tool behind the guard; `run` gets the caller's AuthInfo too. */
export type ToolRegistrar = <S extends z.ZodObject>(
  name: ToolName,
  config: ToolConfig<S>,
  run: (args: z.infer<S>, authInfo: AuthInfo | undefined, extra: CallExtra) => Promise<CallToolResult>,
) => void;

export const readOnly: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

/** How a signed-in caller names the intent instead, said only where the schema offers it. */
export function signedInWayOf(context: ToolContext): string {
  return context.signedIn === true ? " or, with the person signed in (OAuth), its id" : "";
}
