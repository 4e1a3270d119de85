/**
 * Views: the only fields that leave the holder. Results are built from explicit field lists (never
 * by spreading a service's object), so a field added to a domain shape later cannot reach an agent
 * by accident (binding rule 1).
 */
import type { DemandSummary, Intent, Match, Offer } from "../model/types.js";

const defined = <T extends Record<string, unknown>>(value: T): T => {
  for (const key of Object.keys(value)) if (value[key] === undefined) delete value[key];
  return value;
};

export function intentView(intent: Intent): Intent {
  return defined({
    id: intent.id,
    status: intent.status,
    statement: intent.statement,
    criteria: intent.criteria === undefined ? undefined : defined({ ...pickCriteria(intent.criteria) }),
    area: defined({ country: intent.area.country, region: intent.area.region }),
    budget:
      intent.budget === undefined
        ? undefined
        : { amount: intent.budget.amount, currency: intent.budget.currency },
    hasHiddenLimit: intent.hasHiddenLimit === true,
    buyBy: intent.buyBy,
    validUntil: intent.validUntil,
    visibility: intent.visibility,
    createdAt: intent.createdAt,
    draftExpiresAt: intent.draftExpiresAt,
  });
}

function pickCriteria(criteria: NonNullable<Intent["criteria"]>): NonNullable<Intent["criteria"]> {
  return {
    category: criteria.category,
    make: criteria.make,
    model: criteria.model,
    yearMin: criteria.yearMin,
    mileageMaxKm: criteria.mileageMaxKm,
    fuel: criteria.fuel,
    kind: criteria.kind,
    roomsMin: criteria.roomsMin,
    areaMinM2: criteria.areaMinM2,
  };
}

export function offerView(offer: Offer): Offer {
  const attributes: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(offer.attributes ?? {})) {
    if (typeof value === "string" || (typeof value === "number" && Number.isFinite(value)))
      attributes[key] = value;
  }
  return defined({
    id: offer.id,
    source: defined({ kind: offer.source.kind, ref: offer.source.ref, seller: offer.source.seller }),
    inReplyTo: offer.inReplyTo,
    title: offer.title,
    description: offer.description,
    category: offer.category,
    price: { amount: offer.price.amount, currency: offer.price.currency },
    location: defined({ country: offer.location.country, region: offer.location.region }),
    url: offer.url,
    attributes,
    publishedAt: offer.publishedAt,
  });
}

export function matchView(match: Match): Match {
  return { offer: offerView(match.offer), deliveredAt: match.deliveredAt };
}

export function demandView(summary: DemandSummary): DemandSummary {
  const cell = defined({
    category: summary.cell.category,
    country: summary.cell.country,
    region: summary.cell.region,
    budgetBand: summary.cell.budgetBand,
  });
  return summary.withheld
    ? { withheld: true, cell, reason: "below-threshold", asOf: summary.asOf }
    : { withheld: false, cell, activeIntents: summary.activeIntents, asOf: summary.asOf };
}
