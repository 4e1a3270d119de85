import { AgreementError } from "../errors.js";
import type { Offer } from "../message/types.js";
import type { Terms } from "./types.js";

/**
 * "terms: a readable copy of what was agreed, the items, total and delivery date, or the chosen
 * slot. It is derived from the offer and checkers recompute it." For times, `slot` is the index
 * the acceptance (or, for their_reply, the recorded reply) chose.
 */
export const deriveTerms = (offer: Offer, slot: number | undefined): Terms => {
  if (offer.type === "quote") {
    if (slot !== undefined) throw new AgreementError("ERR_SLOT_INVALID", "a quote is agreed without a slot");
    return {
      items: offer.items.map((item) => ({ ...item })),
      total: { ...offer.total },
      ...(offer.delivery_by === undefined ? {} : { delivery_by: offer.delivery_by }),
    };
  }
  const chosen = slot === undefined ? undefined : offer.slots[slot];
  if (!chosen) {
    throw new AgreementError(
      "ERR_SLOT_INVALID",
      `agreed times need the index of one of the ${offer.slots.length} offered slots (from 0)`,
    );
  }
  return {
    slot: { ...chosen },
    ...(offer.purpose === undefined ? {} : { purpose: offer.purpose }),
    ...(offer.location === undefined ? {} : { location: offer.location }),
  };
};
