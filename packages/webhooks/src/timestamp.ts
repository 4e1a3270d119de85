import { WebhookError } from "./errors.js";

/** Standard Webhooks and every reference library use five minutes in both directions. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Milliseconds since the epoch; injected so tests never sleep. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

// Integer seconds only: "1614265330abc", "+1", "1e9" and "1.5" are refused (parseInt would accept some).
const SECONDS = /^[0-9]{1,12}$/;

export function parseTimestamp(value: string, header: string): number {
  if (!SECONDS.test(value)) {
    throw new WebhookError(
      "ERR_WEBHOOK_INVALID_TIMESTAMP",
      `the ${header} header must be whole Unix seconds (digits only), got ${JSON.stringify(value.slice(0, 32))}`,
    );
  }
  return Number(value);
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
