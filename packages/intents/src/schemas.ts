/**
 * The eight tools' exact input schemas (zod 4, every object strict: an undeclared argument is
 * refused, never ignored) and the output schemas published with them. The domain services check
 * every value again precisely (calendar dates, region of the right country, criteria of the right
 * category); these schemas give agents the shapes up front and refuse what is plainly wrong.
 */
import { z } from "zod";
import type { DemandGrid } from "./demand-grid.js";
import { OFFER_LIMITS, AREA_REGIONS as REGIONS, STATEMENT_MAX } from "./limits.js";

/** Binding rule 2, in every tool description. */
export const AGGREGATOR_NOTE =
  "Results come from a market aggregator (this intent holder) and may be incomplete: they cover only the offers and intents this holder's market knows.";

const MAX_KEYS_SHOWN = 5;

/** Consent-link profile: undeclared arguments are refused, and the refusal names them. */
function undeclared(issue: { code?: string; keys?: string[] }): string | undefined {
  if (issue.code !== "unrecognized_keys" || issue.keys === undefined) return undefined;
  const names = issue.keys.slice(0, MAX_KEYS_SHOWN).map((key) => JSON.stringify(key.slice(0, 40)));
  const more = issue.keys.length > MAX_KEYS_SHOWN ? ` and ${issue.keys.length - MAX_KEYS_SHOWN} more` : "";
  const contact = issue.keys.some((key) => /mail|phone|name|contact|address/i.test(key))
    ? "; an intent takes no contact data: the person gives it on the holder's own consent page"
    : "";
  return `undeclared argument ${names.join(", ")}${more} is refused${contact}`;
}

const strict = <T extends z.ZodRawShape>(shape: T) => z.strictObject(shape, { error: undeclared });

const MONEY_MAX = 1_000_000_000_000;

export const countrySchema = z.enum(["SK", "CZ"]);
export const categorySchema = z.enum(["vehicles", "property"]);
export const currencySchema = z.enum(["EUR", "CZK"]);
const ALL_REGIONS = [...REGIONS.SK, ...REGIONS.CZ] as [string, ...string[]];
export const regionSchema = z
  .enum(ALL_REGIONS)
  .describe("ISO 3166-2 region code of the country (e.g. SK-BL, CZ-10); omit for the whole country");

export const areaSchema = strict({ country: countrySchema, region: regionSchema.optional() });
export const moneySchema = strict({
  amount: z.int().min(1).max(MONEY_MAX).describe("whole currency units"),
  currency: currencySchema,
});

const shortText = (max: number) => z.string().min(1).max(max);

export const criteriaSchema = strict({
  category: categorySchema,
  make: shortText(60).optional().describe("vehicles"),
  model: shortText(60).optional().describe("vehicles"),
  yearMin: z.int().min(1900).max(2100).optional().describe("vehicles"),
  mileageMaxKm: z.int().min(0).max(2_000_000).optional().describe("vehicles"),
  fuel: z.enum(["petrol", "diesel", "hybrid", "electric", "lpg"]).optional().describe("vehicles"),
  kind: z.enum(["flat", "house", "land"]).optional().describe("property"),
  roomsMin: z.int().min(1).max(20).optional().describe("property"),
  areaMinM2: z.number().positive().max(1_000_000).optional().describe("property"),
}).describe(
  "every given field must hold for an offer to match; vehicle fields for vehicles, property fields for property",
);

const instant = z
  .union([z.iso.date(), z.iso.datetime({ offset: true })])
  .describe("ISO 8601 date (2027-03-31, the end of that day UTC) or date-time with a time zone");

const statement = z.string().min(1).max(STATEMENT_MAX).describe("what the person wants, in their words");
const hiddenLimit = z
  .number()
  .positive()
  .max(MONEY_MAX)
  .describe(
    "the most the person would pay, in the budget's currency; sealed on receipt and never shown again",
  );

const intentCode = z
  .string()
  .min(1)
  .max(200)
  .describe("the intentCode intent_publish_intent returned (ic_…); keep it secret, like an unsubscribe link");
const intentId = z.string().min(1).max(100);

/**
 * The binding lists area after "optional"; this holder requires it, since the country decides
 * which offers can match, which demand-summary cell counts the intent and, without a budget, the
 * hidden limit's currency. An intent matching anywhere would sit in no cell or in every one.
 */
const AREA_REQUIRED =
  'area is required: the country decides which offers can match (SK or CZ), the demand-summary cell that counts the intent and the currency of a hidden limit without a budget. For a whole country give { "country": "SK" } without a region';

const publishArea = z
  .strictObject(areaSchema.shape, {
    error: (issue) => (issue.input === undefined ? AREA_REQUIRED : undeclared(issue)),
  })
  .describe(AREA_REQUIRED);

export const publishInput = strict({
  statement,
  criteria: criteriaSchema.optional(),
  area: publishArea,
  budget: moneySchema.optional(),
  hiddenLimit: hiddenLimit.optional(),
  buyBy: instant.optional().describe("when the person wants to have bought by"),
  validUntil: instant.optional().describe("when the intent ends (default 30 days, at most 365)"),
  visibility: z
    .enum(["private", "pseudonymous"])
    .optional()
    .describe("pseudonymous: sellers may reply to it (they never see the person); default private"),
});

export const getInput = strict({
  intentCode,
  id: intentId.optional().describe("the intent's id (optional)"),
});

export const updateInput = strict({
  id: intentId,
  intentCode: intentCode.optional().describe("an intentCode cannot change an intent (consent-link rule 4)"),
  statement: statement.optional(),
  criteria: criteriaSchema.optional(),
  budget: moneySchema.optional(),
  hiddenLimit: hiddenLimit.nullable().optional().describe("a new sealed limit, or null to remove it"),
  buyBy: instant.nullable().optional(),
  validUntil: instant
    .optional()
    .describe(
      "asks the person to renew the intent until then: the holder mails them the offer and nothing changes until they accept it on their page (signed in only; send it alone)",
    ),
});

export const withdrawInput = strict({ intentCode, id: intentId.optional() });

export const listMatchesInput = strict({
  intentCode,
  intent: intentId.optional().describe("the intent's id (optional: the code names one intent)"),
  since: z.iso
    .datetime({ offset: true })
    .optional()
    .describe("only matches delivered strictly after this instant (the last deliveredAt you saw)"),
});

/**
 * With OAuth on, a signed-in assistant reads, withdraws and lists by the intent's id and its
 * token, without an intentCode. These variants are declared only when the holder has OAuth on;
 * without it the consent-link schemas above (intentCode required) are the ones published. Each
 * says what either caller sends: the intentCode alone, or signed in, the intent's id.
 */
const codeOrSignIn = intentCode.describe(
  "the intentCode intent_publish_intent returned (ic_…), alone; leave it out when the person is signed in (OAuth) and send id instead",
);
const idWhenSignedIn = intentId.describe(
  "the intent's id: required when signed in (OAuth) without an intentCode; with the intentCode, leave it out",
);
export const getInputSignedIn = strict({
  intentCode: codeOrSignIn.optional(),
  id: idWhenSignedIn.optional(),
});
export const withdrawInputSignedIn = strict({
  intentCode: codeOrSignIn.optional(),
  id: idWhenSignedIn.optional(),
});
export const listMatchesInputSignedIn = strict({
  intentCode: codeOrSignIn.optional(),
  id: idWhenSignedIn.optional(),
  intent: intentId.optional().describe("the binding's name for id: either one, not both"),
  since: listMatchesInput.shape.since,
});

const attributeKey = z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,39}$/);
const attributes = z
  .record(
    attributeKey,
    z.union([z.string().max(OFFER_LIMITS.attributeTextMax), z.number().min(-MONEY_MAX).max(MONEY_MAX)]),
  )
  .refine((value) => Object.keys(value).length <= OFFER_LIMITS.attributesMax, {
    message: `at most ${OFFER_LIMITS.attributesMax} attributes`,
  })
  .describe("vehicles: make, model, year, mileageKm, fuel; property: kind, rooms, areaM2");

export const submitOfferInput = strict({
  inReplyTo: intentId.describe("the id of the pseudonymous intent this offer answers"),
  source: strict({
    kind: z.literal("reply"),
    ref: shortText(OFFER_LIMITS.refMax).optional().describe("your own reference for the offer"),
    seller: shortText(OFFER_LIMITS.sellerMax).optional(),
  }).optional(),
  title: shortText(OFFER_LIMITS.titleMax),
  description: z.string().max(OFFER_LIMITS.descriptionMax).optional(),
  category: categorySchema,
  price: moneySchema,
  location: areaSchema,
  url: z
    .url({ protocol: /^https?$/ })
    .max(OFFER_LIMITS.urlMax)
    .optional(),
  attributes: attributes.optional(),
});

export const searchInput = strict({
  statement: shortText(500).describe("what to look for, in words"),
  limit: z.int().min(1).max(50).optional().describe("at most this many offers (default 20)"),
});

/** `intent_demand_summary` names one cell of the published grid: its enums come from the grid. */
export function demandInput(grid: DemandGrid) {
  const bands = grid.budgetBands.map((band) => band.id);
  return strict({
    category: z.enum(grid.categories as [string, ...string[]]),
    country: z.enum(grid.countries as [string, ...string[]]),
    region: z
      .enum(Object.values(grid.regions).flat() as [string, ...string[]])
      .optional()
      .describe("ISO 3166-2 region of the country; omit for the whole country"),
    budgetBand: z
      .enum(bands as [string, ...string[]])
      .describe("a band id of the grid (listed in the description)"),
  });
}

// ---------------------------------------------------------------------------------------------
// Outputs

const areaOut = z.object({ country: countrySchema, region: z.string().optional() });
const moneyOut = z.object({ amount: z.number(), currency: currencySchema });

export const intentOut = z.object({
  id: z.string(),
  status: z.enum(["awaiting_consent", "awaiting_email_confirmation", "active", "expired", "withdrawn"]),
  statement: z.string(),
  criteria: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  area: areaOut,
  budget: moneyOut.optional(),
  hasHiddenLimit: z.boolean(),
  buyBy: z.string().optional(),
  validUntil: z.string(),
  visibility: z.enum(["private", "pseudonymous"]),
  createdAt: z.string(),
  draftExpiresAt: z.string().optional(),
  // Binding: what the holder adds goes under extensions.
  extensions: z
    .object({
      renewal: z
        .object({ validUntil: z.string(), status: z.literal("offered-to-person") })
        .optional()
        .describe("intent_update_intent with validUntil: the renewal the person was offered by e-mail"),
    })
    .optional(),
});

export const offerOut = z.object({
  id: z.string(),
  source: z.object({
    kind: z.enum(["catalogue", "reply"]),
    ref: z.string().optional(),
    seller: z.string().optional(),
  }),
  inReplyTo: z.string().optional(),
  title: z.string(),
  description: z.string().optional(),
  category: categorySchema,
  price: moneyOut,
  location: areaOut,
  url: z.string().optional(),
  attributes: z.record(z.string(), z.union([z.string(), z.number()])),
  publishedAt: z.string(),
});

// consentUrl is absent when a signed-in person (OAuth) published: no consent is missing.
export const publishOut = z.object({
  intent: intentOut,
  intentCode: z.string(),
  consentUrl: z.string().optional(),
});
export const withdrawOut = z.object({ status: z.literal("withdrawn") });
export const listMatchesOut = z.object({
  matches: z.array(z.object({ offer: offerOut, deliveredAt: z.string() })),
  // Binding: "anything the holder adds goes under extensions".
  extensions: z
    .object({
      more: z.boolean().optional().describe("true when a call with since = the last deliveredAt has more"),
    })
    .optional()
    .describe("what this holder adds to the binding's answer"),
  nextCheckAfter: z
    .string()
    .optional()
    .describe(
      "push profile §8.2: do not call again before this instant (and never more often than every 15 minutes)",
    ),
});
export const searchOut = z.object({ offers: z.array(offerOut) });
export const submitOfferOut = z.object({ accepted: z.boolean() });
const cellOut = z.object({
  category: z.string(),
  country: z.string(),
  region: z.string().optional(),
  budgetBand: z.string(),
});
export const demandOut = z.object({
  withheld: z.boolean(),
  cell: cellOut,
  activeIntents: z.int().optional(),
  reason: z.literal("below-threshold").optional(),
  asOf: z.string(),
});

// Push profile 0.4 (§4): the two subscription tools.

const pushEvent = z.enum(["intent.matches.delivered", "intent.status.changed"]);
/** The push tools take the intentCode alone: a signed-in caller has none to offer in its place. */
const pushIntentCode = z
  .string({
    error: (issue) =>
      issue.input === undefined
        ? "this tool needs the intentCode that intent_publish_intent returned: notifications are subscribed with the intentCode only, never by sign-in (OAuth)"
        : undefined,
  })
  .min(1)
  .max(200)
  .describe(
    "the intentCode intent_publish_intent returned (ic_…), required even when the person is signed in; keep it secret",
  );
const subscriptionId = z
  .string()
  .min(1)
  .max(100)
  .describe("the subscriptionId intent_subscribe_events returned");

export const subscribeInput = strict({
  intentCode: pushIntentCode,
  delivery: strict({
    url: z
      .string()
      .min(1)
      .max(2048)
      .describe("your endpoint: https, port 443, a domain name (never an IP address)"),
    secret: z
      .string()
      .min(1)
      .max(120)
      .describe(
        "whsec_ followed by 24–64 random bytes in base64: the holder signs every notification with it",
      ),
  }),
  events: z.array(pushEvent).min(1).max(2).optional().describe("which notifications you want (default both)"),
  relayFor: z
    .string()
    .min(1)
    .max(253)
    .optional()
    .describe("a forwarder's field: the host of the agent endpoint it relays to (shown to the person)"),
});

export const unsubscribeInput = strict({ intentCode: pushIntentCode, subscriptionId });

export const pushSubscriptionOut = z.object({
  specVersion: z.literal("0.4"),
  type: z.literal("push-subscription"),
  subscriptionId: z.string(),
  status: z.enum(["awaiting_verification", "awaiting_person_approval", "active", "ended"]),
  approval: z.enum(["on-consent-page", "sent-to-verified-channel", "granted", "not-required"]).optional(),
  events: z.array(pushEvent),
  expiresAt: z.string(),
  refreshBefore: z.string(),
  endedReason: z.string().optional(),
});
