/**
 * The eight intent_* tools of the Isto Intents MCP binding 0.1 with the consent-link profile.
 *
 * The auth seam: every buyer tool turns its caller into one `Principal` in `buyerPrincipal` and
 * hands only that to the services. Today the principal comes from the `intentCode` argument
 * (consent-link rule 4, via `IntentService.principalForCode`). OAuth arrives through the same
 * function: the HTTP layer verifies a bearer token and passes the SDK's `AuthInfo`, which becomes
 * `{ kind: "oauth", subject, clientId }` (`principalFromAuth`); the services decide what an OAuth
 * principal may do. No tool looks at a token or a code anywhere else.
 */

import {
  AGGREGATOR_NOTE,
  type demandInput,
  demandOut,
  getInput,
  getInputSignedIn,
  intentOut,
  listMatchesInput,
  listMatchesInputSignedIn,
  listMatchesOut,
  publishInput,
  publishOut,
  pushSubscriptionOut,
  searchInput,
  searchOut,
  submitOfferInput,
  submitOfferOut,
  subscribeInput,
  type ToolName,
  unsubscribeInput,
  updateInput,
  withdrawInput,
  withdrawInputSignedIn,
  withdrawOut,
} from "@doorbell/intents";
import {
  type CallExtra,
  registerTool,
  success,
  type ToolConfig,
  type ToolGuard,
} from "@doorbell/intents/server";
import type { CallLimit, ToolObserver } from "@doorbell/mcp-endpoint";
import { isDatabaseBusy } from "@doorbell/store";
import type { AuthInfo, CallToolResult, McpServer, ToolAnnotations } from "@modelcontextprotocol/server";
import type { Logger } from "pino";
import type { z } from "zod";
import type { DemandService, IntentService, MatchService, OfferService } from "../domain/services.js";
import { type Category, type Country, HolderError, type Principal } from "../domain/types.js";
import type { PushService } from "../push/service.js";
import { buyerPrincipal, NEEDS_SIGN_IN, principalFromAuth } from "./principal.js";
import { demandView, intentView, matchView, offerView } from "./views.js";

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
  /** Issue #8: OAuth is on, so the buyer tools also take a token instead of the intentCode. */
  signedIn?: boolean;
  log: Logger;
}

/** Push profile §6 rule 9: a test call carries `x-isto-test: 1`. */
function isTestCall(extra: CallExtra): boolean {
  return extra.header("x-isto-test")?.trim() === "1";
}

const DEFAULT_SEARCH_LIMIT = 20;

const readOnly: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

export function registerHolderTools(server: McpServer, context: ToolContext): void {
  const { services, log } = context;
  /** How a signed-in caller names the intent instead, said only where the schema offers it. */
  const signedInWay = context.signedIn === true ? " or, with the person signed in (OAuth), its id" : "";

  const guard: ToolGuard = {
    ...(context.limit === undefined ? {} : { limit: context.limit }),
    ...(context.observe === undefined ? {} : { observe: context.observe }),
    note: AGGREGATOR_NOTE,
    log,
    failedEvent: "mcp.tool.failed",
    isBusy: isDatabaseBusy,
  };
  /** Registers one tool behind the guard (tool.ts); `run` gets the caller's AuthInfo too. */
  function tool<S extends z.ZodObject>(
    name: ToolName,
    config: ToolConfig<S>,
    run: (args: z.infer<S>, authInfo: AuthInfo | undefined, extra: CallExtra) => Promise<CallToolResult>,
  ): void {
    if (context.only !== undefined && context.only !== name) return;
    registerTool(server, guard, name, config, (args, extra) => run(args, extra.authInfo, extra));
  }

  tool(
    "intent_publish_intent",
    {
      title: "Publish what a person wants to buy",
      description:
        "Publishes a draft intent: what the person wants to buy, where, for how much. It takes no contact data at all (no e-mail, phone or name). " +
        "area is required here (at least its country): it decides which offers can match. " +
        "It returns the intent, an intentCode and a consentUrl on this holder's own site. Give the consentUrl to the person: " +
        "they open it, enter their own e-mail, read the consent text and confirm by e-mail; only then is the intent active and matched. " +
        "Do not open, fill in or submit that page for them. Keep the intentCode secret: it reads the intent, lists its matches and withdraws it. " +
        "A draft is never matched or counted and ends within 24 hours if nobody confirms it.",
      inputSchema: publishInput,
      outputSchema: publishOut,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    async (args, authInfo) => {
      // Issue #8: with a verified token the intent is the signed-in person's at once (no consent link).
      const signedIn = principalFromAuth(authInfo);
      if (signedIn !== undefined && services.intents.publishSignedIn !== undefined) {
        const published = await services.intents.publishSignedIn(signedIn, args);
        return success(
          { intent: intentView(published.intent), intentCode: published.intentCode },
          "The intent is active for the signed-in person; the holder e-mailed them its manage link. " +
            "Read it and its matches with the id while signed in, or with the intentCode.",
        );
      }
      const published = await services.intents.publish(args);
      return success(
        {
          intent: intentView(published.intent),
          intentCode: published.intentCode,
          consentUrl: published.consentUrl,
        },
        `Give the person this link to confirm the intent themselves: ${published.consentUrl} — do not open it for them. ` +
          "Keep the intentCode to check matches later with intent_list_matches.",
      );
    },
  );

  tool(
    "intent_get_intent",
    {
      title: "Read an intent",
      description: `Reads an intent with its intentCode${signedInWay}: statement, criteria, area, budget, status and whether a hidden limit is set (never its value, never the person's contact).`,
      inputSchema: context.signedIn === true ? getInputSignedIn : getInput,
      outputSchema: intentOut,
      annotations: readOnly,
    },
    async (args, authInfo) => {
      const principal = await buyerPrincipal(services.intents, args.intentCode, authInfo);
      return success(intentView(await services.intents.get(principal, args.id)));
    },
  );

  tool(
    "intent_update_intent",
    {
      title: "Change an intent",
      description:
        "Changes an intent's statement, criteria, budget, hidden limit or buyBy. It needs the person signed in (OAuth, where this holder offers it): " +
        "an intentCode cannot change an intent (consent-link rule 4), so withdraw it and publish a new one instead. " +
        "validUntil is not renewed by an agent: renewing needs the person's own fresh action. Sent alone, validUntil offers the renewal to the person " +
        "(the holder mails them; nothing changes until they accept on their page), and the answer says so under extensions.renewal.",
      inputSchema: updateInput,
      outputSchema: intentOut,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    async (args, authInfo) => {
      const { id, intentCode, validUntil, ...changes } = args;
      const principal = await buyerPrincipal(services.intents, intentCode, authInfo, NEEDS_SIGN_IN);
      if (validUntil === undefined) {
        return success(intentView(await services.intents.update(principal, id, changes)));
      }
      // Issue 16 item 12: a renewal is offered to the person, never made by the agent.
      if (Object.keys(changes).length > 0) {
        throw new HolderError(
          "ERR_HOLDER_INVALID",
          "validUntil goes alone: it only offers the renewal to the person; send the other changes in another call",
        );
      }
      const renewal = await services.intents.offerRenewal(principal, id, validUntil);
      const intent = await services.intents.get(principal, id);
      return success(
        { ...intentView(intent), extensions: { renewal } },
        `The person was mailed an offer to renew this intent until ${renewal.validUntil.slice(0, 10)}. validUntil changes only if they accept it on the holder's page; do not open that page for them.`,
      );
    },
  );

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

  tool(
    "intent_list_matches",
    {
      title: "List the offers delivered for an intent",
      description:
        `Lists the offers this holder has delivered for an intent (named by its intentCode${signedInWay}), oldest first, as { matches: [{ offer, deliveredAt }] }. ` +
        "Pass since (the last deliveredAt you saw) to get only newer ones; an empty answer is cheap, so poll with since. " +
        "One answer holds at most about 1,000 matches; extensions.more: true says to call again with since = the last deliveredAt. " +
        "Delivery to the person's own e-mail continues independently.",
      inputSchema: context.signedIn === true ? listMatchesInputSignedIn : listMatchesInput,
      outputSchema: listMatchesOut,
      annotations: readOnly,
    },
    async (args, authInfo) => {
      const principal = await buyerPrincipal(services.intents, args.intentCode, authInfo);
      const named = namedIntent(args);
      const { matches, more } = await services.matches.listMatches(principal, named, args.since);
      const intentId = principal.kind === "intent-code" ? principal.intentId : named;
      // A reply belongs to the intent it answers: never show one to another buyer (rule 1).
      const own = matches.filter(
        (match) => match.offer.inReplyTo === undefined || match.offer.inReplyTo === intentId,
      );
      const nextCheckAfter = context.nextCheckAfter?.();
      return success({
        matches: own.map(matchView),
        // The binding puts what a holder adds under extensions; §8.2 names nextCheckAfter itself.
        ...(more === true ? { extensions: { more: true } } : {}),
        ...(nextCheckAfter === undefined ? {} : { nextCheckAfter }),
      });
    },
  );

  const grid = services.demand.grid();
  tool(
    "intent_demand_summary",
    {
      title: "Count active intents in one cell of the demand grid",
      description:
        "How many active intents fall in one cell of this holder's band grid: category × country (or region) × budget band. " +
        `A cell with fewer than ${grid.threshold} active intents is withheld ({ withheld: true }). Drafts are never counted. ` +
        `Budget bands (<currency>-<min>-<max>, min included, max excluded, empty max: no upper bound; "none": intents without a budget): ${grid.budgetBands.map((band) => band.id).join(", ")}. ` +
        "Public: no sign-in needed.",
      inputSchema: context.demandSchema,
      outputSchema: demandOut,
      annotations: readOnly,
    },
    async (args) => {
      const cell = {
        category: args.category as Category,
        country: args.country as Country,
        ...(args.region === undefined ? {} : { region: args.region }),
        budgetBand: args.budgetBand,
      };
      return success(demandView(await services.demand.summary(cell)));
    },
  );

  tool(
    "intent_submit_offer",
    {
      title: "Reply to a pseudonymous intent with an offer",
      description:
        "A seller's offer in reply to one intent (inReplyTo: the intent's id). Only intents published with visibility pseudonymous accept replies. " +
        "The seller never receives anything about the buyer: the answer is only { accepted }.",
      inputSchema: submitOfferInput,
      outputSchema: submitOfferOut,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    async (args) => {
      const { accepted } = await services.offers.submitReply({
        inReplyTo: args.inReplyTo,
        source: {
          kind: "reply",
          ...(args.source?.ref === undefined ? {} : { ref: args.source.ref }),
          ...(args.source?.seller === undefined ? {} : { seller: args.source.seller }),
        },
        title: args.title,
        ...(args.description === undefined ? {} : { description: args.description }),
        category: args.category,
        price: args.price,
        location: args.location,
        ...(args.url === undefined ? {} : { url: args.url }),
        attributes: args.attributes ?? {},
      });
      return success({ accepted: accepted === true });
    },
  );

  tool(
    "intent_search_offers",
    {
      title: "Search the catalogue",
      description:
        "Searches this holder's catalogue by words (full text), newest first, as { offers: [...] }. Public: no sign-in needed.",
      inputSchema: searchInput,
      outputSchema: searchOut,
      annotations: readOnly,
    },
    async (args) => {
      const offers = await services.offers.search(args.statement, args.limit ?? DEFAULT_SEARCH_LIMIT);
      // The catalogue only: a seller's reply is for the one buyer it answers.
      return success({ offers: offers.filter((offer) => offer.source.kind === "catalogue").map(offerView) });
    },
  );

  const push = services.push;
  if (push === undefined) return;

  tool(
    "intent_subscribe_events",
    {
      title: "Ask to be notified when an intent has new matches",
      description:
        "Push profile 0.4: asks this holder to ring your endpoint (a signed Standard Webhooks POST) when an intent gets new matches or changes status. " +
        "The notification carries no offer, link or code: on each one, read the matches with intent_list_matches and since. " +
        "delivery.url must be https on port 443 with a domain name; delivery.secret is your whsec_ secret. The holder first proves the endpoint with a " +
        "subscription.verification challenge (answer 200 with the same challenge), then the person allows it on the holder's own page or from an e-mail " +
        "(never through you). Calling again with the same intentCode and url renews it (same subscriptionId, new lease, the new secret after its challenge): " +
        "do so before refreshBefore. At most 3 subscriptions per intent. relayFor: a forwarder names the host it relays to.",
      inputSchema: subscribeInput,
      outputSchema: pushSubscriptionOut,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async (args, authInfo, extra) => {
      const principal = await buyerPrincipal(services.intents, args.intentCode, authInfo);
      const view = await push.subscribe(principal, {
        delivery: args.delivery,
        ...(args.events === undefined ? {} : { events: args.events }),
        ...(args.relayFor === undefined ? {} : { relayFor: args.relayFor }),
        test: isTestCall(extra),
      });
      context.onSubscribed?.(view.subscriptionId, principal);
      return success(view, subscriptionNote(view));
    },
  );

  tool(
    "intent_unsubscribe_events",
    {
      title: "Stop notifications for an intent",
      description:
        "Push profile 0.4: ends one notification subscription of the intent at once. Matches stay readable with intent_list_matches.",
      inputSchema: unsubscribeInput,
      outputSchema: pushSubscriptionOut,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args, authInfo) => {
      const principal = await buyerPrincipal(services.intents, args.intentCode, authInfo);
      return success(await push.unsubscribe(principal, args.subscriptionId));
    },
  );
}

/** The intent a list_matches call names by id (or by the binding's `intent`); both must agree. */
function namedIntent(args: { id?: string; intent?: string }): string | undefined {
  if (args.id !== undefined && args.intent !== undefined && args.id !== args.intent) {
    throw new HolderError("ERR_HOLDER_INVALID", "id and intent name the same intent: send one of them");
  }
  return args.id ?? args.intent;
}

/** One plain sentence for the agent about what happens next. */
function subscriptionNote(view: { status: string; approval?: string }): string {
  if (view.status === "ended") return "This subscription has ended.";
  const approval =
    view.approval === "on-consent-page"
      ? "the person allows it on the consent page, as a separate choice"
      : view.approval === "sent-to-verified-channel"
        ? "the holder e-mails the person a link to allow it"
        : "no approval is needed for a test call";
  return `First the holder sends a subscription.verification challenge to your endpoint; then ${approval}. Until then nothing else is sent; keep reading intent_list_matches.`;
}
