/** The OAuth profile of the buyer tools: the built-in authorization server or an external issuer. */

import { MCP_PATH } from "@doorbell/mcp-endpoint";
import { asTables } from "@doorbell/store";
import type { HolderContext } from "../context.js";
import type { HolderLimits } from "../limits/index.js";
import { createHolderOAuth, type HolderOAuth, type OAuthTables } from "../oauth/index.js";
import type { HolderHosts } from "./context.js";
import type { CreateHolderOptions } from "./options.js";

/** `undefined` when `oauth: false` (consent-link only). */
export async function openHolderOAuth(
  options: CreateHolderOptions,
  context: HolderContext,
  hosts: HolderHosts,
  limits: HolderLimits,
): Promise<HolderOAuth | undefined> {
  if (options.oauth === false) return undefined;
  return createHolderOAuth(
    { ...context, store: asTables<OAuthTables>(context.store) },
    {
      ...(options.oauth ?? {}),
      resource: `${context.config.publicUrl}${MCP_PATH}`,
      egress: hosts.egress(),
      limits,
      hostAllowed: (host) => hosts.allowed(host),
    },
  );
}
