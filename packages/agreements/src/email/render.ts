import { CURRENCY_MINOR_UNITS } from "../message/currencies.js";
import type { Message, Money } from "../message/types.js";

/**
 * The text a person reads, rendered from the same stored message as the machine part: one list of
 * labelled lines, printed as text/plain and as text/html. It says nothing the message does not
 * (no greeting, no signature block, no advice); the sender's note is labelled as a note.
 */

export interface RenderedLine {
  readonly label: string;
  readonly value: string;
}

export interface Rendered {
  readonly subject: string;
  readonly lines: readonly RenderedLine[];
  readonly items: readonly string[];
  readonly note: string | undefined;
}

const TITLES: Record<Message["type"], string> = {
  ask_quote: "Request for a quote",
  quote: "Quote",
  propose_times: "Proposed times",
  accept: "Acceptance",
  decline: "Decline",
  cancel: "Cancellation",
};

/** "125000" EUR → "1250.00 EUR": whole minor units shown with the currency's decimals, no rounding. */
export function formatMoney(money: Money): string {
  const digits = CURRENCY_MINOR_UNITS[money.currency] ?? 0;
  if (digits === 0) return `${money.amount} ${money.currency}`;
  const padded = money.amount.padStart(digits + 1, "0");
  return `${padded.slice(0, -digits)}.${padded.slice(-digits)} ${money.currency}`;
}

function time(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
}

export function renderMessage(message: Message): Rendered {
  const lines: RenderedLine[] = [];
  const items: string[] = [];
  const sender =
    message.from.name === undefined ? message.from.address : `${message.from.name} <${message.from.address}>`;
  lines.push({
    label: "From",
    value: `${sender}, an agent (${message.agent.name}, ${message.agent.kind}) acting for ${message.acting_for.org_name} <${message.acting_for.contact}>`,
  });
  lines.push({ label: "To", value: message.to.address });
  switch (message.type) {
    case "ask_quote":
      for (const item of message.items)
        items.push(`${item.quantity}${item.unit ? ` ${item.unit}` : ""} × ${item.description}`);
      if (message.wanted_by !== undefined) lines.push({ label: "Wanted by", value: message.wanted_by });
      break;
    case "quote":
      for (const item of message.items) {
        const price = item.unit_price === undefined ? "" : ` at ${formatMoney(item.unit_price)} each`;
        items.push(`${item.quantity}${item.unit ? ` ${item.unit}` : ""} × ${item.description}${price}`);
      }
      lines.push({ label: "Total", value: formatMoney(message.total) });
      if (message.delivery_by !== undefined) lines.push({ label: "Delivery by", value: message.delivery_by });
      if (message.replaces !== undefined) lines.push({ label: "Replaces offer", value: message.replaces });
      lines.push({ label: "Open until", value: time(message.exp) });
      break;
    case "propose_times":
      message.slots.forEach((slot, index) => {
        items.push(`Slot ${index}: ${slot.start} to ${slot.end} (${slot.time_zone})`);
      });
      if (message.purpose !== undefined) lines.push({ label: "Purpose", value: message.purpose });
      if (message.location !== undefined) lines.push({ label: "Location", value: message.location });
      if (message.replaces !== undefined) lines.push({ label: "Replaces offer", value: message.replaces });
      lines.push({ label: "Open until", value: time(message.exp) });
      break;
    case "accept":
      lines.push({ label: "Accepts offer", value: message.ref });
      if (message.slot !== undefined) lines.push({ label: "Chosen slot", value: String(message.slot) });
      break;
    case "decline":
      lines.push({ label: "Declines", value: message.ref });
      if (message.reason !== undefined)
        lines.push({ label: "Reason", value: message.reason.replace("_", " ") });
      break;
    case "cancel":
      lines.push({ label: "Cancels", value: message.ref });
      break;
  }
  if (message.authority !== undefined) {
    const limits =
      message.authority.limits_version === undefined
        ? ""
        : ` (limits version ${message.authority.limits_version})`;
    lines.push({ label: "Decided by", value: `${message.authority.decided_by}${limits}` });
  }
  lines.push({ label: "Message", value: message.id });
  lines.push({ label: "Thread", value: message.thread });
  return {
    subject: `${TITLES[message.type]} [${message.thread.slice(0, 8)}]`,
    lines,
    items,
    note: message.note,
  };
}

export const NOTE_LABEL = "Note from the sender's agent (their words, not an instruction)";

export function renderText(message: Message): string {
  const r = renderMessage(message);
  const out = [TITLES[message.type], ""];
  for (const item of r.items) out.push(`- ${item}`);
  if (r.items.length > 0) out.push("");
  for (const line of r.lines) out.push(`${line.label}: ${line.value}`);
  if (r.note !== undefined) out.push("", `${NOTE_LABEL}:`, r.note);
  return `${out.join("\n")}\n`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function renderHtml(message: Message): string {
  const r = renderMessage(message);
  const parts = [`<!doctype html><html><body><h1>${escapeHtml(TITLES[message.type])}</h1>`];
  if (r.items.length > 0) parts.push(`<ul>${r.items.map((i) => `<li>${escapeHtml(i)}</li>`).join("")}</ul>`);
  parts.push(
    `<dl>${r.lines.map((l) => `<dt>${escapeHtml(l.label)}</dt><dd>${escapeHtml(l.value)}</dd>`).join("")}</dl>`,
  );
  if (r.note !== undefined) {
    parts.push(
      `<p><strong>${escapeHtml(NOTE_LABEL)}:</strong></p><blockquote>${escapeHtml(r.note)}</blockquote>`,
    );
  }
  parts.push("</body></html>");
  return parts.join("");
}
