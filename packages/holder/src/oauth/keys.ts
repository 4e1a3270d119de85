/**
 * The authorization server's own keys, made once and kept sealed in `holder_oauth_secrets`: an
 * ES256 signing key (oidc-provider needs one for ID tokens and its JWKS; access tokens are opaque)
 * and the cookie signing keys of its interaction and session cookies. A restart keeps them, so
 * sign-ins in progress survive it.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import type { Database, Sealer } from "@doorbell/store";
import type { OAuthTables } from "./schema.js";

export interface ProviderKeys {
  jwks: { keys: Record<string, unknown>[] };
  cookieKeys: string[];
}

const NAME = "provider-keys";
const AAD = "holder.oauth.secrets:provider-keys";

export async function loadProviderKeys(store: Database<OAuthTables>, sealer: Sealer): Promise<ProviderKeys> {
  const read = async () =>
    store.db.selectFrom("holder_oauth_secrets").select("sealed").where("name", "=", NAME).executeTakeFirst();
  const existing = await read();
  if (existing !== undefined) return JSON.parse(sealer.openText(existing.sealed, AAD)) as ProviderKeys;
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = privateKey.export({ format: "jwk" }) as Record<string, unknown>;
  const keys: ProviderKeys = {
    jwks: { keys: [{ ...jwk, kid: randomBytes(8).toString("base64url"), alg: "ES256", use: "sig" }] },
    cookieKeys: [randomBytes(32).toString("base64url")],
  };
  // Two processes starting at once: the first insert wins and both use what is stored.
  await store.db
    .insertInto("holder_oauth_secrets")
    .values({ name: NAME, sealed: sealer.seal(JSON.stringify(keys), AAD) })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  const stored = await read();
  return stored === undefined ? keys : (JSON.parse(sealer.openText(stored.sealed, AAD)) as ProviderKeys);
}
