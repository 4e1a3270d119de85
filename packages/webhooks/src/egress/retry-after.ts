/**
 * Reads a Retry-After header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date, turned into
 * whole seconds from `nowMs` (never negative). Anything else is ignored, not guessed at.
 * Capping a long delay is the retry schedule's job, not this parser's.
 */
export const parseRetryAfter = (
  value: string | readonly string[] | undefined,
  nowMs: number,
): number | undefined => {
  // Several Retry-After headers disagree with each other: ignore them all.
  if (value === undefined || (typeof value !== "string" && value.length !== 1)) return undefined;
  const text = (typeof value === "string" ? value : (value[0] ?? "")).trim();
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds : undefined;
  }
  // All three HTTP-date forms start with a day name; Date.parse alone accepts too much.
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
};
