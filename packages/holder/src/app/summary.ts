/** What `doorbell serve` prints at start-up: where the holder is and how it was set up. */
import type { LoadedKeyring } from "@doorbell/store";

export interface HolderSummary {
  name: string;
  publicUrl: string;
  mcpUrl: string;
  database: string;
  dialect: "sqlite" | "postgres";
  keys: LoadedKeyring["source"];
  keyFile?: string;
  mail: string;
  /** The dev mailbox's unguessable address (printed in the start-up summary). */
  mailboxUrl?: string;
  demo: { imported: number; skipped: boolean } | undefined;
  activeIntents: number;
  /** Where doorbells may go (see `CreateHolderOptions.webhookPolicy`). */
  webhookPolicy: "production" | "development";
  /** Signed-in buyers: the built-in authorization server, an external issuer, or none. */
  oauth: "built-in" | "external" | "off";
  /** Where /check fetches key pages from; empty: visitors give them. */
  checkTrustedOrigins: readonly string[];
  /** At most one match digest per intent in this long; 0: every import's at once. */
  digestWindowMs: number;
}
