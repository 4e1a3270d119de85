import { EVENTS_EXTENSION } from "./methods.js";

export interface EventsCapability {
  listChanged?: boolean;
}

/**
 * The capability in both places clients look: top-level `events` (the sketch, ChatGPT) and
 * `extensions["io.modelcontextprotocol/events"]` (SEP-3415). A TypeScript SDK 1.x client strips
 * unknown top-level keys from the capabilities it parses, so only the second survives there.
 */
export function eventsCapabilities(capability: EventsCapability = {}): {
  events: EventsCapability;
  extensions: Record<string, EventsCapability>;
} {
  return { events: { ...capability }, extensions: { [EVENTS_EXTENSION]: { ...capability } } };
}

/** The events capability of a server's declared capabilities, wherever it was declared. */
export function readEventsCapability(capabilities: unknown): EventsCapability | undefined {
  if (typeof capabilities !== "object" || capabilities === null) return undefined;
  const record = capabilities as Record<string, unknown>;
  const extensions = record.extensions as Record<string, unknown> | undefined;
  const found = record.events ?? extensions?.[EVENTS_EXTENSION];
  return typeof found === "object" && found !== null ? (found as EventsCapability) : undefined;
}
