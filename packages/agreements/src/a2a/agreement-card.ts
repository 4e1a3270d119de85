import type { AgentCard } from "@a2a-js/sdk";
import { PROFILE_URL } from "../constants.js";

/**
 * The agent card of an agent that speaks agent-intents/1 over A2A: the profile declared as an
 * extension (its URI is the profile address) and one skill named `agreements`. A sender uses A2A
 * only when the other side's card has both ({@link speaksAgreements}).
 */
export const AGREEMENTS_EXTENSION_URI = PROFILE_URL;
export const AGREEMENTS_SKILL_ID = "agreements";

export interface AgreementCardOptions {
  readonly name: string;
  readonly description: string;
  /** The JSON-RPC endpoint. */
  readonly url: string;
  readonly version: string;
  readonly pushNotifications?: boolean;
  readonly organization?: string;
}

export function agreementAgentCard(options: AgreementCardOptions): AgentCard {
  return {
    name: options.name,
    description: options.description,
    supportedInterfaces: [
      { url: options.url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
    ],
    provider:
      options.organization === undefined ? undefined : { organization: options.organization, url: "" },
    version: options.version,
    capabilities: {
      streaming: false,
      pushNotifications: options.pushNotifications ?? false,
      extensions: [
        {
          uri: AGREEMENTS_EXTENSION_URI,
          description: "agent-intents/1: signed quotes, offered times, accept, decline and cancel",
          required: true,
          params: undefined,
        },
      ],
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["application/json"],
    defaultOutputModes: ["application/json"],
    skills: [
      {
        id: AGREEMENTS_SKILL_ID,
        name: "Agreements",
        description: "Ask for a quote, quote, propose times, accept, decline or cancel (agent-intents/1)",
        tags: ["agent-intents/1"],
        examples: [],
        inputModes: ["application/json"],
        outputModes: ["application/json"],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

/** Whether a card declares the profile as an extension and has the `agreements` skill. */
export function speaksAgreements(card: AgentCard): boolean {
  return (
    (card.capabilities?.extensions ?? []).some((e) => e.uri === AGREEMENTS_EXTENSION_URI) &&
    card.skills.some((s) => s.id === AGREEMENTS_SKILL_ID)
  );
}
