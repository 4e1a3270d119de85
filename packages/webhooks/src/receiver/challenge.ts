/**
 * The two endpoint challenges Doorbell answers: push profile §6 rule 2 (`subscription.verification`,
 * challenge in `data`) and the MCP Events sketch "Endpoint verification" (`verification`, top level).
 */
export interface ChallengeRequest {
  kind: "push-profile" | "mcp-events";
  challenge: string;
  subscriptionId?: string;
}

const MAX_CHALLENGE_LENGTH = 512;

export function readChallenge(json: unknown): ChallengeRequest | undefined {
  if (!isObject(json)) return undefined;
  if (json.type === "subscription.verification" && isObject(json.data)) {
    const { challenge, subscriptionId } = json.data;
    if (isChallenge(challenge)) {
      return {
        kind: "push-profile",
        challenge,
        ...(typeof subscriptionId === "string" ? { subscriptionId } : {}),
      };
    }
  }
  if (json.type === "verification" && isChallenge(json.challenge)) {
    return {
      kind: "mcp-events",
      challenge: json.challenge,
      ...(typeof json.id === "string" ? { subscriptionId: json.id } : {}),
    };
  }
  return undefined;
}

function isChallenge(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_CHALLENGE_LENGTH;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
