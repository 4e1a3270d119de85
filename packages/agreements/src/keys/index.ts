export { domainVouchesFor, systemTxtResolver, type TxtResolver } from "./dns.js";
export {
  createKeyPageFetcher,
  type KeyPageFetcherOptions,
  type KeyPageSource,
  MAX_KEY_PAGE_BYTES,
  staticKeyPages,
} from "./fetch.js";
export { buildKeyPage, type KeyPage, type PageKey, parseKeyPage } from "./page.js";
export { createKeyPageHandler, type KeyPageHandlerOptions } from "./serve.js";
export { createKeyResolver, judgeKeyTime, type KeyResolverOptions } from "./trust.js";
