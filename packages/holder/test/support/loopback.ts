/** Small helpers for tests that run a holder on loopback. */
export { freePort } from "@doorbell/store/testing";

/** Polls `probe` every 50 ms until it gives a value (at most 10 s), naming `what` if it never does. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}
