import type { Message, Money, Slot } from "./types.js";

/**
 * The rules a JSON Schema cannot say: exp after iat, a slot that ends after it starts, a time
 * zone the IANA database knows, one currency per quote, an accept that answers its own offer.
 * Each returns plain-words violations; none means the message is sound.
 */
// Making a DateTimeFormat costs tens of microseconds; the answer for a name never changes.
const zones = new Map<string, boolean>();
const validTimeZone = (name: string): boolean => {
  let valid = zones.get(name);
  if (valid === undefined) {
    try {
      new Intl.DateTimeFormat("en", { timeZone: name });
      valid = true;
    } catch {
      valid = false;
    }
    if (zones.size >= 1000) zones.clear();
    zones.set(name, valid);
  }
  return valid;
};

const slotProblems = (slot: Slot, index: number): string[] => {
  const problems: string[] = [];
  const start = Date.parse(slot.start);
  const end = Date.parse(slot.end);
  if (!(end > start)) problems.push(`slot ${index} must end after it starts`);
  if (!validTimeZone(slot.time_zone)) {
    problems.push(
      `slot ${index} has the time zone ${JSON.stringify(slot.time_zone)}, which is not an IANA time zone`,
    );
  }
  return problems;
};

const currencyProblems = (total: Money, prices: readonly (Money | undefined)[]): string[] =>
  prices.flatMap((price, index) =>
    price !== undefined && price.currency !== total.currency
      ? [`item ${index} is priced in ${price.currency} but the total is in ${total.currency}`]
      : [],
  );

export const messageRuleViolations = (message: Message): string[] => {
  const problems: string[] = [];
  if (!(message.exp > message.iat)) problems.push("exp must be later than iat");
  switch (message.type) {
    case "quote":
      problems.push(
        ...currencyProblems(
          message.total,
          message.items.map((item) => item.unit_price),
        ),
      );
      if (message.replaces === message.id) problems.push("a quote cannot replace itself");
      break;
    case "propose_times":
      message.slots.forEach((slot, index) => {
        problems.push(...slotProblems(slot, index));
      });
      if (
        new Set(message.slots.map((s) => `${s.start}|${s.end}|${s.time_zone}`)).size !== message.slots.length
      ) {
        problems.push("the same slot is offered twice");
      }
      if (message.replaces === message.id) problems.push("an offer cannot replace itself");
      break;
    case "accept":
      if (message.in_reply_to !== message.ref) {
        problems.push("an accept must answer the offer it accepts: in_reply_to must equal ref");
      }
      break;
    default:
      break;
  }
  if (message.in_reply_to !== undefined && message.in_reply_to === message.id) {
    problems.push("a message cannot answer itself");
  }
  return problems;
};
