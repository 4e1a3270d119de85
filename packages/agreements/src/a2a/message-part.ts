import { type Message as A2AMessage, type Artifact, type Part, Role } from "@a2a-js/sdk";
import type { Message } from "../message/types.js";
import { AGREEMENTS_EXTENSION_URI } from "./agreement-card.js";

/**
 * An agreement message over A2A: an A2A Message with exactly one DataPart whose data holds the
 * same JSON-LD as the e-mail machine part (`message`) and the compact JWS (`jws`). The thread is
 * the task's contextId. The record travels as an Artifact with one DataPart on completion.
 */

export interface AgreementPayload {
  readonly message: Message;
  readonly jws?: string;
}

function dataPart(data: unknown): Part {
  return {
    content: { $case: "data", value: data },
    metadata: undefined,
    filename: "",
    mediaType: "application/json",
  };
}

export function toA2AMessage(
  payload: AgreementPayload,
  options: { role: "user" | "agent"; taskId?: string },
): A2AMessage {
  return {
    messageId: payload.message.id,
    contextId: payload.message.thread,
    taskId: options.taskId ?? "",
    role: options.role === "user" ? Role.ROLE_USER : Role.ROLE_AGENT,
    parts: [
      dataPart({ message: payload.message, ...(payload.jws === undefined ? {} : { jws: payload.jws }) }),
    ],
    metadata: undefined,
    extensions: [AGREEMENTS_EXTENSION_URI],
    referenceTaskIds: [],
  };
}

/** The payload of an A2A message, or why it is not an agreement message. */
export function fromA2AMessage(
  message: A2AMessage,
): { value: unknown; jws: string | undefined } | { error: string } {
  if (message.parts.length !== 1) return { error: "an agreement message has exactly one part" };
  const content = message.parts[0]?.content;
  if (content?.$case !== "data") return { error: "the part of an agreement message is a DataPart" };
  const data = content.value as Record<string, unknown> | undefined;
  if (data === undefined || typeof data !== "object" || Array.isArray(data) || !("message" in data)) {
    return { error: "the DataPart holds no message" };
  }
  if (data.jws !== undefined && typeof data.jws !== "string")
    return { error: "jws must be a compact JWS string" };
  return { value: data.message, jws: data.jws as string | undefined };
}

export function recordArtifact(record: unknown, thread: string): Artifact {
  return {
    artifactId: `record-${thread}`,
    name: "agreement record",
    description: "agent-agreement/1 record",
    parts: [dataPart(record)],
    metadata: undefined,
    extensions: [AGREEMENTS_EXTENSION_URI],
  };
}
