// @doorbell/holder: an Isto Intents holder (MCP binding 0.1 + consent-link profile).

// Wire names this package exported before they moved to @doorbell/intents.
export {
  BUDGET_BANDS,
  type BudgetBand,
  COUNTRIES,
  checkedDoorbell,
  type DemandGrid,
  NOTIFICATION_SCHEMA,
  notificationProblem,
  PUSH_EVENTS,
  type PushEvent,
  regionsOf,
  SUBSCRIPTION_SCHEMA,
  subscriptionProblem,
} from "@doorbell/intents";
export { MCP_PATH, type NodeServers, nodeServers } from "@doorbell/mcp-endpoint";
export {
  type CreateHolderOptions,
  createHolder,
  DEFAULT_LANGUAGES,
  type Holder,
  type HolderSummary,
  holderEgressPolicy,
  importDemoCatalogueOnce,
} from "./app/holder.js";
export { holderMigrations } from "./app/migrations.js";
export { createHolderServices, type HolderServices } from "./app/services.js";
export {
  type CatalogueFormat,
  catalogueFormatFromPath,
  checkCatalogueFile,
  createOfferService,
  demoCatalogue,
  readCatalogueFile,
  streamCatalogueFile,
} from "./catalogue/index.js";
export { createConsentService, type HolderConsentService } from "./consent/index.js";
export { defaultConfig, type HolderConfig, type HolderContext } from "./context.js";
export { createDemandService } from "./demand.js";
export { DEFAULT_CONSENT_TEXT } from "./i18n/consent-texts.js";
export { createIntentService, type IntentHooks } from "./intents/index.js";
export {
  addressKey,
  type ClientAddressResolver,
  createClientAddressResolver,
  createHolderLimits,
  createSharedLimiter,
  DEFAULT_LIMITS,
  type HolderLimits,
  LIMIT_BUCKETS,
  type LimitBucket,
  type LimitHint,
  type LimitRule,
  type LimitVerdict,
  limitSpec,
  limitsMigrations,
  limitUsageLines,
  operatorHintText,
  parseLimitSpecs,
  parseTrustedProxies,
  type SharedLimiter,
} from "./limits/index.js";
export {
  createLocalMailbox,
  isLocalMailbox,
  type LocalMailbox,
  type MailboxEntry,
} from "./mail/local-mailbox.js";
export type { Mailer, MailMessage } from "./mail/mailer.js";
export { createSmtpMailer, type SmtpMailer, type SmtpMailerOptions } from "./mail/smtp.js";
export { createMatchingService, type MatchingService } from "./matching/service.js";
export * from "./mcp/index.js";
export type {
  CatalogueOfferInput,
  ConsentService,
  ConsentView,
  DemandService,
  IntentChanges,
  IntentService,
  MatchService,
  OfferService,
  ReplyOfferInput,
} from "./model/services.js";
export type { HolderTables } from "./model/tables.js";
export {
  type Area,
  type Category,
  type Country,
  type Criteria,
  type Currency,
  type DemandCell,
  type DemandSummary,
  HolderError,
  type HolderErrorCode,
  type Intent,
  type IntentStatus,
  type Match,
  type Money,
  type Offer,
  type OfferSource,
  type Principal,
  type PublishInput,
  type PublishResult,
  type Visibility,
} from "./model/types.js";
export * from "./observability/index.js";
export { type Approval, type PushTables, pushMigrations } from "./push/schema.js";
export {
  createPushService,
  type NotificationReceipt,
  type PushOptions,
  type PushService,
  type PushStatus,
  type PushSubscriptionView,
  type SubscribeRequest,
} from "./push/service.js";
export {
  createHolderApp,
  DESCRIPTOR_PATH,
  type HolderAppDeps,
  type HolderDescriptor,
  holderDescriptor,
  JWKS_PATH,
} from "./web/app.js";
