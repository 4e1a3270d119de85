/** Standard Webhooks header names (lower-case on the wire; lookups are case-insensitive). */
export const WEBHOOK_ID = "webhook-id";
export const WEBHOOK_TIMESTAMP = "webhook-timestamp";
export const WEBHOOK_SIGNATURE = "webhook-signature";

// A type alias (not an interface) so it is assignable to HeadersInit and plain records.
export type StandardHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
};

// Printable ASCII without spaces; the id is part of the signed content and an idempotency key.
export const WEBHOOK_ID_PATTERN = /^[\x21-\x7e]{1,256}$/;
