import { WebhookError } from "./errors.js";

/** Standard Webhooks and every reference library use five minutes in both directions. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Milliseconds since the epoch; injected so tests never sleep. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

/** Integer seconds, 1–12 ASCII digits only: "1614265330abc", "+1", "1e9" and "1.5" are refused. */
export function parseTimestamp(value: string, header: string): number {
  let seconds = 0;
  const valid = value.length >= 1 && value.length <= 12;
  for (let i = 0; valid && i < value.length; i++) {
    const digit = value.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return invalidTimestamp(value, header);
    seconds = seconds * 10 + digit;
  }
  return valid ? seconds : invalidTimestamp(value, header);
}

function invalidTimestamp(value: string, header: string): never {
  throw new WebhookError(
    "ERR_WEBHOOK_INVALID_TIMESTAMP",
    `the ${header} header must be whole Unix seconds (digits only), got ${JSON.stringify(value.slice(0, 32))}`,
  );
}

export function checkTolerance(
  timestamp: number,
  header: string,
  now: number,
  toleranceSeconds: number,
): void {
  const skew = Math.floor(now / 1000) - timestamp;
  if (skew > toleranceSeconds) {
    throw new WebhookError(
      "ERR_WEBHOOK_TIMESTAMP_TOO_OLD",
      `the ${header} ${timestamp} is ${skew} s older than this clock (tolerance ±${toleranceSeconds} s)`,
    );
  }
  if (-skew > toleranceSeconds) {
    throw new WebhookError(
      "ERR_WEBHOOK_TIMESTAMP_TOO_NEW",
      `the ${header} ${timestamp} is ${-skew} s ahead of this clock (tolerance ±${toleranceSeconds} s)`,
    );
  }
}

export const nowSeconds = (clock: Clock): number => Math.floor(clock() / 1000);
