/** A body is always handled as the exact bytes on the wire; a string is taken as its UTF-8 encoding. */
export type BodyInput = Uint8Array | string;

const encoder = new TextEncoder();

export function toBytes(body: BodyInput): Uint8Array {
  return typeof body === "string" ? encoder.encode(body) : body;
}

/** Strict standard base64 (with padding), as Standard Webhooks and Svix emit it. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function decodeBase64Strict(text: string): Buffer | undefined {
  if (!BASE64.test(text)) return undefined;
  return Buffer.from(text, "base64");
}
