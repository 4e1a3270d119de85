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
    // One endpoint, both method sets: v1.0's SendMessage/GetTask/CancelTask and the v0.3 names
    // the profile's binding uses (message/send, tasks/get, tasks/cancel); see http-handler.ts.
    supportedInterfaces: [
      { url: options.url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
      { url: options.url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "0.3" },
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

/**
 * The same card in the v0.3 shape (`url`, `preferredTransport`, `protocolVersion`, `kind`-free
 * skills), for a v0.3 client, which asks without an `A2A-Version` header. The v1.0 interfaces are
 * kept as `supportedInterfaces`, so a v1.0 client that did not say its version still finds them.
 */
export function legacyAgentCard(card: AgentCard): Record<string, unknown> {
  const legacy = card.supportedInterfaces.find((i) => i.protocolVersion.startsWith("0.3"));
  if (legacy === undefined) throw new RangeError("the card has no v0.3 interface");
  const capabilities = card.capabilities;
  return {
    protocolVersion: "0.3.0",
    name: card.name,
    description: card.description,
    url: legacy.url,
    preferredTransport: legacy.protocolBinding,
    version: card.version,
    ...(card.provider === undefined ? {} : { provider: card.provider }),
    capabilities: {
      streaming: capabilities?.streaming ?? false,
      pushNotifications: capabilities?.pushNotifications ?? false,
      extensions: (capabilities?.extensions ?? []).map((e) => ({
        uri: e.uri,
        description: e.description,
        required: e.required,
        ...(e.params === undefined ? {} : { params: e.params }),
      })),
    },
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map((skill) => ({
      id: skill.id,
      name: skill.name,
      description: skill.description,
      tags: skill.tags,
      examples: skill.examples,
      inputModes: skill.inputModes,
      outputModes: skill.outputModes,
    })),
    supportedInterfaces: card.supportedInterfaces,
  };
}
