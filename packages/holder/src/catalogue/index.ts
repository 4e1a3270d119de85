export { offerFromRow } from "../model/offer-rows.js";
export {
  type CatalogueFileProblem,
  type CatalogueFormat,
  catalogueFormatFromPath,
  checkCatalogueFile,
  formatProblems,
  type ParseCatalogueOptions,
  type ParsedCatalogue,
  parseCatalogueFile,
  readCatalogueFile,
  streamCatalogueFile,
} from "./catalogue-file.js";
export {
  DEMO_CATALOGUE_DEFAULT_NOW,
  type DemoCatalogueOptions,
  demoCatalogue,
  seededRandom,
} from "./demo-catalogue.js";
export { SEARCH_LIMITS, searchOffers, searchTerms } from "./search.js";
export { offerSearch } from "./search-schema.js";
export { createOfferService, type OfferServiceOptions, REPLY_NOT_ACCEPTED } from "./service.js";
export {
  checkCatalogueOffer,
  checkReplyOffer,
  FUELS,
  KINDS,
  validateCatalogueOffers,
  validateReplyOffer,
} from "./validate.js";
