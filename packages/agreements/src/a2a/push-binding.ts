import { CodedError } from "@doorbell/errors";
/**
 * The A2A push binding rule (specs/a2a-push-binding-rule.md): push is used only on an acknowledged
 * binding that matches what the client sent. Anything else refuses the push channel (never the
 * task) and falls back to `tasks/get` polling, or fails when no polling fallback exists.
 *
 * Acks are compared the way the SDKs actually echo them (reference/a2a.md §6(a)2): `url` exactly,
 * `taskId` exactly, the authentication scheme case-insensitively, `token` and `credentials` only
 * when the ack carries them (empty and absent are the same; v1.1 servers may redact credentials),
 * and the server-assigned `id` never.
 */

/** What the rule needs from the remote agent card. */
export interface PushCardFacts {
  readonly name: string;
  /** The card's `version`: divergences are attributed to it. */
  readonly version: string;
  readonly pushNotifications: boolean;
}

/** The binding the client asks for: where it receives POSTs and how it authenticates them. */
export interface PushBindingConfig {
  readonly taskId: string;
  readonly url: string;
  readonly token?: string;
  /** The one scheme the client's receiver accepts (send exactly one: reference/a2a.md §6(a)2). */
  readonly authentication?: { readonly scheme: string; readonly credentials?: string };
}

/** What the remote echoed from `CreateTaskPushNotificationConfig` (or `…/get`). */
export interface PushBindingAck {
  readonly taskId?: string;
  readonly id?: string;
  readonly url?: string;
  readonly token?: string;
  readonly authentication?: { readonly scheme?: string; readonly credentials?: string };
}

export type PushBindingReason =
  | "push_not_advertised"
  | "push_unverified"
  | "no_ack"
  | "task_id_changed"
  | "url_rewritten"
  | "scheme_changed"
  | "credentials_changed"
  | "token_changed"
  /** The ack matched, but this agent has not yet been seen honouring the scheme (no delivery yet). */
  | "awaiting_confirmation";

export type PushMode = "push" | "polling";

export interface PushBindingDecision {
  readonly mode: PushMode;
  /** True whenever the card advertised push but the binding was not what the client declared. */
  readonly pushUnverified: boolean;
  /** Why push was refused; empty when `mode` is `push` or the card never advertised push. */
  readonly reasons: readonly PushBindingReason[];
}

export interface NegotiatePushBindingInput {
  readonly card: PushCardFacts;
  readonly config: PushBindingConfig;
  /** `undefined` when the remote produced no ack (no call, an error, or -32003). */
  readonly ack: PushBindingAck | undefined;
  /** Whether the client runs `tasks/get` reconciliation for this task. */
  readonly hasPollingFallback: boolean;
  /** The task's `push_unverified` flag: once set, it forces polling. */
  readonly pushUnverified?: boolean;
  /**
   * Whether this agent (card name and version) was already seen honouring the declared scheme: an
   * authenticated delivery to a binding made the same way (the rule's "prior successful delivery").
   * Without it a matching ack binds the receiver but the task is polled until the first
   * authenticated delivery confirms the binding, which then counts for later tasks too.
   */
  readonly confirmed?: boolean;
}

export class PushBindingUnverifiedError extends CodedError<"ERR_PUSH_BINDING_UNVERIFIED"> {
  override readonly name = "PushBindingUnverifiedError";
  readonly reasons: readonly PushBindingReason[];
  constructor(card: PushCardFacts, reasons: readonly PushBindingReason[]) {
    super(
      "ERR_PUSH_BINDING_UNVERIFIED",
      `agent "${card.name}" (card version ${card.version}) advertises push but the binding is not acknowledged ` +
        `as sent (${reasons.join(", ")}), and no polling fallback is configured`,
    );
    this.reasons = reasons;
  }
}

function present(value: string | undefined): value is string {
  return value !== undefined && value !== "";
}

/** Every way the ack differs from what was sent; empty when it matches. */
export function compareAck(config: PushBindingConfig, ack: PushBindingAck): PushBindingReason[] {
  const reasons: PushBindingReason[] = [];
  if (present(ack.taskId) && ack.taskId !== config.taskId) reasons.push("task_id_changed");
  if (ack.url !== config.url) reasons.push("url_rewritten");
  const sentScheme = config.authentication?.scheme ?? "";
  const echoedScheme = ack.authentication?.scheme ?? "";
  if (sentScheme.toLowerCase() !== echoedScheme.toLowerCase()) reasons.push("scheme_changed");
  const echoedCredentials = ack.authentication?.credentials;
  if (present(echoedCredentials) && echoedCredentials !== (config.authentication?.credentials ?? "")) {
    reasons.push("credentials_changed");
  }
  if (present(ack.token) && ack.token !== (config.token ?? "")) reasons.push("token_changed");
  return reasons;
}

/** The rule itself. Throws {@link PushBindingUnverifiedError} only when push is refused and no fallback exists. */
export function negotiatePushBinding(input: NegotiatePushBindingInput): PushBindingDecision {
  const { card, config, ack, hasPollingFallback } = input;
  if (!card.pushNotifications) return { mode: "polling", pushUnverified: false, reasons: [] };
  let reasons: PushBindingReason[];
  if (input.pushUnverified === true) reasons = ["push_unverified"];
  else if (ack === undefined) reasons = ["no_ack"];
  else reasons = compareAck(config, ack);
  if (reasons.length === 0) {
    if (input.confirmed === true) return { mode: "push", pushUnverified: false, reasons };
    if (!hasPollingFallback) throw new PushBindingUnverifiedError(card, ["awaiting_confirmation"]);
    return { mode: "polling", pushUnverified: false, reasons: ["awaiting_confirmation"] };
  }
  if (!hasPollingFallback) throw new PushBindingUnverifiedError(card, reasons);
  return { mode: "polling", pushUnverified: true, reasons };
}
