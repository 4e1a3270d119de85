import type { Authority, Message, MessageType } from "../message/types.js";

/**
 * The owner's limits for one agent inbox (the `authority` field): which counterparties, which
 * message types the agent may send on its own, the largest total per currency, and how long an
 * offer may stay open. Inside them the agent answers itself (`decided_by: limits` with the
 * policy's `limits_version`); outside them the answer waits for the owner.
 */
export interface LimitsPolicy {
  /** Changes whenever the owner changes the limits; carried as `limits_version`. */
  readonly version: string;
  /** Addresses (`a@b.example`) or whole domains (`@b.example`); absent = anyone. */
  readonly counterparties?: readonly string[];
  /** Types the agent may send on its own; absent = none (everything waits for the owner). */
  readonly types?: readonly MessageType[];
  /** Largest quote total the agent may offer or accept on its own, per ISO 4217 code, in minor units. */
  readonly maxTotal?: Readonly<Record<string, string>>;
  /** Longest an offer the agent sends may stay open (exp − iat), seconds. */
  readonly maxOfferOpenSeconds?: number;
  /** Counterparties refused outright (an abuse rule): their messages are rejected. */
  readonly blocked?: readonly string[];
  /** The `level` carried in `authority`, if the owner names one. */
  readonly level?: string;
}

export type LimitsDecision =
  | { readonly within: true; readonly authority: Authority }
  | { readonly within: false; readonly reasons: readonly string[] };

function listed(list: readonly string[], address: string): boolean {
  const lower = address.toLowerCase();
  const domain = lower.slice(lower.lastIndexOf("@"));
  return list.some((entry) => {
    const e = entry.toLowerCase();
    return e === lower || e === domain;
  });
}

export function isBlocked(policy: LimitsPolicy, counterparty: string): boolean {
  return policy.blocked !== undefined && listed(policy.blocked, counterparty);
}

function minorUnitsAtMost(amount: string, limit: string): boolean {
  return BigInt(amount) <= BigInt(limit);
}

/** The total a message commits to: a quote's own, or the accepted offer's for an accept. */
export function committedTotal(
  message: Message,
  accepted?: Message,
): { amount: string; currency: string } | undefined {
  if (message.type === "quote") return message.total;
  if (message.type === "accept" && accepted?.type === "quote") return accepted.total;
  return undefined;
}

/** Whether the agent may send `draft` on its own, and on what authority. */
export function decideByLimits(policy: LimitsPolicy, draft: Message, accepted?: Message): LimitsDecision {
  const reasons: string[] = [];
  const counterparty = draft.to.address;
  if (policy.counterparties !== undefined && !listed(policy.counterparties, counterparty)) {
    reasons.push(`${counterparty} is not a counterparty the limits allow`);
  }
  if (!(policy.types ?? []).includes(draft.type))
    reasons.push(`the limits do not let the agent send ${draft.type} on its own`);
  const total = committedTotal(draft, accepted);
  if (total !== undefined) {
    const limit = policy.maxTotal?.[total.currency];
    if (limit === undefined) reasons.push(`the limits set no largest total in ${total.currency}`);
    else if (!minorUnitsAtMost(total.amount, limit)) {
      reasons.push(
        `the total ${total.amount} ${total.currency} is over the limit of ${limit} ${total.currency}`,
      );
    }
  }
  if (
    (draft.type === "quote" || draft.type === "propose_times") &&
    policy.maxOfferOpenSeconds !== undefined
  ) {
    const open = draft.exp - draft.iat;
    if (open > policy.maxOfferOpenSeconds) {
      reasons.push(
        `the offer would stay open ${open} s, longer than the limit of ${policy.maxOfferOpenSeconds} s`,
      );
    }
  }
  if (reasons.length > 0) return { within: false, reasons };
  return {
    within: true,
    authority: {
      decided_by: "limits",
      limits_version: policy.version,
      ...(policy.level === undefined ? {} : { level: policy.level }),
    },
  };
}
