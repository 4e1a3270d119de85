import { randomUUID } from "node:crypto";
import type { HolderContext } from "../context.js";
import type { MatchingService } from "../matching/service.js";
import type { OfferService } from "../model/services.js";
import { importCatalogue } from "./import.js";
import type { OfferContext } from "./offer-write.js";
import { submitReply } from "./reply.js";
import { searchOffers } from "./search.js";

export interface OfferServiceOptions {
  /** New offer ids (default `off_` + a random UUID). */
  newId?: () => string;
  /** Offers written (and matched) per transaction during an import (default 500). */
  batchSize?: number;
}

/**
 * Offers: catalogue import (upsert by source.ref, new and changed offers matched against the
 * active intents in the same transaction; import.ts), seller replies to pseudonymous intents
 * (reply.ts), and search (search.ts).
 */
export function createOfferService(
  ctx: HolderContext,
  matching: MatchingService,
  options: OfferServiceOptions = {},
): OfferService {
  const { store, clock, log } = ctx;
  const offers: OfferContext = {
    store,
    clock,
    log,
    matching,
    newId: options.newId ?? (() => `off_${randomUUID()}`),
    batchSize: options.batchSize ?? 500,
  };
  return {
    importCatalogue: (list) => importCatalogue(offers, list),
    submitReply: (input) => submitReply(offers, input),
    search(statement, limit) {
      return searchOffers(store, statement, limit);
    },
  };
}

/** The message a refused reply carries wherever a reason is shown (MCP layer). */
export const REPLY_NOT_ACCEPTED = "this intent is not accepting replies";
