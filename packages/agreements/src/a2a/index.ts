export {
  AGREEMENTS_EXTENSION_URI,
  AGREEMENTS_SKILL_ID,
  type AgreementCardOptions,
  agreementAgentCard,
  legacyAgentCard,
  speaksAgreements,
} from "./agreement-card.js";
export { AgreementExecutor, type AgreementExecutorOptions } from "./agreement-executor.js";
export { type A2AAgreements, type AttachA2AOptions, attachA2A } from "./attach.js";
export { type A2AHttpHandlerOptions, a2aHttpHandler } from "./http-handler.js";
export { type AgreementPayload, fromA2AMessage, recordArtifact, toA2AMessage } from "./message-part.js";
export {
  type ChannelChoice,
  chooseChannel,
  connectToPeer,
  type PeerDiscoveryOptions,
  peerCardUrl,
  type RemoteAgent,
} from "./peer-discovery.js";
export {
  compareAck,
  type NegotiatePushBindingInput,
  negotiatePushBinding,
  type PushBindingAck,
  type PushBindingConfig,
  type PushBindingDecision,
  type PushBindingReason,
  PushBindingUnverifiedError,
  type PushCardFacts,
  type PushMode,
} from "./push-binding.js";
export {
  ackFromSdk,
  type BindPushOptions,
  type BindPushResult,
  bindPush,
  pushCardFacts,
} from "./push-client.js";
export {
  checkPushAuthentication,
  createPushReceiver,
  type PushReceiver,
  type PushReceiverOptions,
  readPushPayload,
} from "./push-receiver.js";
export { type EgressPushOptions, EgressPushRequestHandler } from "./push-request-handler.js";
export { EgressPushSender, type EgressPushSenderOptions, type PushFailure } from "./push-sender.js";
export { A2ARemoteThreads, type FollowTimers, type RemoteThreadsOptions } from "./remote-threads.js";
export { createSqlTaskStore } from "./sql-task-store.js";
export { AgreementTaskPublisher, type TaskPublisherOptions } from "./task-publisher.js";
export {
  logDivergenceToStderr,
  type PushDivergence,
  type PushDivergenceKind,
  ReconcilerConfigError,
  type StuckTaskAlert,
  TaskReconciler,
  type TaskReconcilerOptions,
  TERMINAL_TASK_STATES,
} from "./task-reconciler.js";
export { taskStateOf, WAITING_FOR_OWNER } from "./task-states.js";
