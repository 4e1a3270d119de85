import { isIP, type LookupFunction, Socket } from "node:net";
import { rootCertificates } from "node:tls";
import { buildConnector } from "undici";
import { bareAddress } from "./address.js";
import { vettedLookup } from "./lookup.js";
import type { EgressPolicy } from "./policy.js";
import { EgressRefusal } from "./refusal.js";
import { judgeAddress } from "./verdict.js";

/** The second layer: the address the socket really reached, whatever resolved it. */
const refuseSocket = (policy: EgressPolicy, socket: Socket): EgressRefusal | undefined => {
  const remote = socket.remoteAddress;
  if (remote === undefined) {
    return new EgressRefusal("blocked_address", "the connection has no remote address");
  }
  const judged = judgeAddress(policy, remote);
  return judged.allowed
    ? undefined
    : new EgressRefusal(
        "blocked_address",
        `the connection reached an address that is refused: ${judged.reason}`,
      );
};

/**
 * undici's own connector, wrapped: names resolve only through `vettedLookup`, IP literals
 * (for which Node skips `lookup`) are judged before connecting, and every socket's remote
 * address is judged again once TCP is up and again before undici may use it. `lookup` is a
 * parameter only so a test can prove the second layer alone.
 */
export const guardedConnector = (
  policy: EgressPolicy,
  lookup: LookupFunction = vettedLookup(policy),
): buildConnector.connector => {
  const connect = buildConnector({
    lookup,
    autoSelectFamily: true,
    timeout: policy.timeoutMs,
    rejectUnauthorized: true,
    allowH2: false,
    // An extra CA is added to Node's roots (`ca` alone would replace them).
    ...(policy.ca === undefined ? {} : { ca: [...rootCertificates, policy.ca.toString()] }),
  });
  return (options, callback) => {
    const literal = bareAddress(options.hostname);
    if (isIP(literal) !== 0) {
      if (!policy.allowIpLiterals) {
        callback(
          new EgressRefusal("blocked_url", "the URL must name its host by a domain name, not an IP address"),
          null,
        );
        return;
      }
      const judged = judgeAddress(policy, literal);
      if (!judged.allowed) {
        callback(
          new EgressRefusal("blocked_url", `the URL's IP address is not allowed: ${judged.reason}`),
          null,
        );
        return;
      }
    }
    const socket: unknown = connect(options, (error, connected) => {
      if (error || !connected) {
        callback(error ?? new Error("no socket"), null);
        return;
      }
      const refusal = refuseSocket(policy, connected);
      if (refusal) {
        connected.destroy();
        callback(refusal, null);
        return;
      }
      callback(null, connected);
    });
    // buildConnector returns the socket at run time (its types say void): check at TCP connect,
    // before a TLS ClientHello or a request byte can follow.
    if (socket instanceof Socket) {
      socket.once("connect", () => {
        const refusal = refuseSocket(policy, socket);
        if (refusal) socket.destroy(refusal);
      });
    }
  };
};
