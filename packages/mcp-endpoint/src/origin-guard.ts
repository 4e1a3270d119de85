/**
 * DNS rebinding protection for the MCP endpoint (MCP transports, "Security Warning"): a request is
 * served only when its Host names this holder (the public URL's host, or a loopback name for local
 * use) and its Origin, when a browser sent one, is this holder's own origin (or a loopback origin).
 *
 * A rebinding page makes a browser send its own host name in Host, so it never passes; a request
 * without Origin comes from a program, not a page, and is served. Host is compared without the
 * port (reverse proxies and port forwarding change ports, not names); Origin is compared whole.
 * This is our own check because the SDK's transport options for it are deprecated in favour of
 * middleware.
 */

export interface OriginPolicy {
  /** The holder's public origin, e.g. https://intents.example.sk. */
  publicUrl: string;
  /** More host names to accept (without ports), e.g. a second domain served by the same holder. */
  allowedHosts?: readonly string[];
  /** More origins to accept, e.g. https://app.example.sk. */
  allowedOrigins?: readonly string[];
  /** Accept localhost, 127.0.0.1 and [::1] as Host and as Origin (any port). Default true. */
  allowLoopback?: boolean;
}

const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

/** The host name of a Host header value: lower case, without port or trailing dot. */
export function hostnameOf(host: string): string | undefined {
  const value = host.trim().toLowerCase();
  if (value === "") return undefined;
  let name: string;
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    if (end < 0) return undefined;
    const rest = value.slice(end + 1);
    if (rest !== "" && !/^:\d{1,5}$/.test(rest)) return undefined;
    name = value.slice(0, end + 1);
  } else {
    const colon = value.indexOf(":");
    if (colon >= 0 && !/^\d{1,5}$/.test(value.slice(colon + 1))) return undefined;
    name = colon >= 0 ? value.slice(0, colon) : value;
  }
  name = name.replace(/\.$/, "");
  return name === "" ? undefined : name;
}

function originOf(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/** Returns why a request is refused, or undefined when it may be served. */
export function createOriginGuard(policy: OriginPolicy): (request: Request) => string | undefined {
  const check = createHeaderGuard(policy);
  return (request) => {
    let hostHeader = request.headers.get("host");
    if (hostHeader === null) {
      try {
        hostHeader = new URL(request.url).host;
      } catch {
        hostHeader = "";
      }
    }
    return check(hostHeader, request.headers.get("origin"));
  };
}

/** The same check on the Host and Origin header values (a Node request's, say). */
export function createHeaderGuard(
  policy: OriginPolicy,
): (hostHeader: string, originHeader: string | null | undefined) => string | undefined {
  const publicUrl = new URL(policy.publicUrl);
  const loopback = policy.allowLoopback ?? true;
  const hosts = new Set<string>([publicUrl.hostname.toLowerCase()]);
  for (const host of policy.allowedHosts ?? []) {
    const name = hostnameOf(host);
    if (name !== undefined) hosts.add(name);
  }
  if (loopback) for (const host of LOOPBACK_HOSTS) hosts.add(host);
  const origins = new Set<string>([publicUrl.origin]);
  for (const origin of policy.allowedOrigins ?? []) {
    const normalised = originOf(origin);
    if (normalised !== undefined) origins.add(normalised);
  }

  return (hostHeader, originHeader) => {
    const hostname = hostnameOf(hostHeader);
    if (hostname === undefined || !hosts.has(hostname)) {
      return "this MCP endpoint does not answer for that Host (DNS rebinding protection)";
    }
    if (originHeader === null || originHeader === undefined) return undefined;
    const origin = originOf(originHeader);
    if (origin !== undefined) {
      if (origins.has(origin)) return undefined;
      if (loopback && LOOPBACK_HOSTS.includes(new URL(origin).hostname)) return undefined;
    }
    return "this MCP endpoint does not accept requests from that Origin (DNS rebinding protection)";
  };
}
