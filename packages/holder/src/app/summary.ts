/** What `doorbell serve` prints at start-up: where the holder is and how it was set up. */

import { MCP_PATH } from "@doorbell/mcp-endpoint";
import { DIGEST_WINDOW_MS } from "../consent/index.js";
import type { HolderMail } from "./mail.js";
import type { OpenedStore } from "./open.js";
import type { CreateHolderOptions, HolderSettings, HolderSummary } from "./options.js";

/** The summary of a holder that started with these options and settings. */
export function holderSummary(
  options: CreateHolderOptions,
  settings: HolderSettings,
  opened: OpenedStore,
  mail: HolderMail,
  found: Pick<HolderSummary, "demo" | "activeIntents">,
): HolderSummary {
  const { config, publicUrl } = settings;
  const { keys, store } = opened;
  return {
    name: config.name,
    publicUrl,
    mcpUrl: `${publicUrl}${MCP_PATH}`,
    database: store.description,
    dialect: store.dialect,
    keys: keys.source,
    ...(keys.path === undefined ? {} : { keyFile: keys.path }),
    mail: mail.description,
    ...(mail.mailboxPath === undefined ? {} : { mailboxUrl: `${publicUrl}${mail.mailboxPath}` }),
    demo: found.demo,
    activeIntents: found.activeIntents,
    webhookPolicy: settings.webhookPolicy,
    checkTrustedOrigins: settings.checkOrigins,
    digestWindowMs: config.digestWindowMs ?? DIGEST_WINDOW_MS,
    oauth: options.oauth === false ? "off" : options.oauth?.external === undefined ? "built-in" : "external",
  };
}
