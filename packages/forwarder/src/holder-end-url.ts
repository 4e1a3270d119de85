/**
 * Where the upstream holder takes end requests: its descriptor (RFC 8615, at the MCP URL's origin,
 * `/.well-known/isto-intents.json`) names it as `push.endUrl`. A descriptor that does not, that
 * describes another MCP endpoint, or that names a URL on another origin means the holder does not
 * take them (an older one): its side then ends at its next doorbell, as before. What was learnt is
 * kept for five minutes, as long as the holder lets the descriptor be cached.
 */
import { type EgressPolicy, getJson } from "@doorbell/webhooks";

export const DESCRIPTOR_PATH = "/.well-known/isto-intents.json";
const KEEP_MS = 5 * 60 * 1000;

export type HolderEndUrl =
  | { readonly url: URL }
  /** The holder does not take end requests, or the policy forbids reaching it: nothing to retry. */
  | { readonly unsupported: string }
  /** The descriptor could not be read this time: try again later. */
  | { readonly unreachable: string };

export type HolderEndUrlFinder = () => Promise<HolderEndUrl>;

/** The end URL a descriptor names for this MCP endpoint, if it names one on the endpoint's origin. */
export function endUrlIn(descriptor: unknown, upstream: URL): HolderEndUrl {
  if (typeof descriptor !== "object" || descriptor === null)
    return { unsupported: "the holder's descriptor is not a JSON object" };
  const { mcp, push } = descriptor as { mcp?: { endpoint?: unknown }; push?: { endUrl?: unknown } };
  if (mcp?.endpoint !== upstream.href)
    return { unsupported: "the holder's descriptor describes another MCP endpoint" };
  if (typeof push?.endUrl !== "string") return { unsupported: "the holder does not take end requests" };
  let url: URL;
  try {
    url = new URL(push.endUrl);
  } catch {
    return { unsupported: "the holder's end URL is not a URL" };
  }
  // Only where the agent's subscriptions are made: a descriptor cannot send them elsewhere.
  if (url.origin !== upstream.origin) return { unsupported: "the holder's end URL is on another origin" };
  return { url };
}

/** Whether an answer with this status may succeed later: a busy, early or failing holder. */
export const retryableStatus = (status: number): boolean =>
  status === 408 || status === 425 || status === 429 || status >= 500;

export function createHolderEndUrlFinder(
  upstream: URL,
  policy: EgressPolicy,
  clock: () => number,
): HolderEndUrlFinder {
  let kept: { value: HolderEndUrl; until: number } | undefined;
  // End requests sent side by side share one read of the descriptor.
  let reading: Promise<HolderEndUrl> | undefined;
  const read = async (): Promise<HolderEndUrl> => {
    const answer = await getJson({ url: new URL(DESCRIPTOR_PATH, upstream), policy });
    let value: HolderEndUrl;
    if (answer.ok) value = endUrlIn(answer.json, upstream);
    else if (answer.category === "blocked_url" || answer.category === "blocked_address")
      value = { unsupported: `the egress policy refuses the holder: ${answer.reason}` };
    else if (answer.status !== undefined && !retryableStatus(answer.status))
      value = { unsupported: "the holder serves no descriptor this forwarder can read" };
    else return { unreachable: answer.reason };
    kept = { value, until: clock() + KEEP_MS };
    return value;
  };
  return () => {
    if (kept !== undefined && kept.until > clock()) return Promise.resolve(kept.value);
    reading ??= read().finally(() => {
      reading = undefined;
    });
    return reading;
  };
}
