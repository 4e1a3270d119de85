/** Waits between attempts after a failure: 1 s, 2 s, 4 s … up to 30 s. */
export function backoffMs(attempt: number): number {
  return Math.min(30_000, 1_000 * 2 ** Math.max(0, attempt - 1));
}
