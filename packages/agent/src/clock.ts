/** Milliseconds since the epoch; injected so pacing, renewals and replay windows are tested without sleeps. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

export const SECOND = 1_000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

export const iso = (ms: number): string => new Date(ms).toISOString();
