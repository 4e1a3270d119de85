export { agreementsInboxMigrations } from "../schema.js";
export {
  AgentInbox,
  type AgentInboxOptions,
  type AnswerContext,
  type Draft,
  type Responder,
  type SentMessage,
  type StartOptions,
  type Taken,
} from "./agent-inbox.js";
export { type EmailOutletOptions, emailOutlet } from "./email-outlet.js";
export { InboxError, type InboxErrorCode } from "./errors.js";
export { type ExpiryTimers, type InboxExpiry, type InboxExpiryOptions, startInboxExpiry } from "./expiry.js";
export { decideByLimits, isBlocked, type LimitsDecision, type LimitsPolicy } from "./limits.js";
export type { Outgoing, Outlet } from "./outlet.js";
export {
  checkReceivedMessage,
  type ReceiverCheckInput,
  type ReceiverResult,
  type ReceiverState,
  type ReceiverVerdict,
  type TransportEvidence,
} from "./receiver-checks.js";
export {
  createSmtpSender,
  type InboxSmtpServer,
  type InboxSmtpServerOptions,
  type MailSender,
  type ReceivedEnvelope,
  startInboxSmtpServer,
} from "./smtp.js";
export {
  type Channel,
  createSqlInboxStore,
  type InboxRow,
  type InboxStore,
  type PendingAnswer,
  type StoredMessage,
  type TaskBinding,
  type ThreadState,
} from "./store.js";
