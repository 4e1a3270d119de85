/** The scopes of the holder's buyer tools (a token carries one or both). */
export const SCOPE_READ = "intents:read";
export const SCOPE_MANAGE = "intents:manage";
export const RESOURCE_SCOPES = [SCOPE_READ, SCOPE_MANAGE] as const;

/** What each scope lets an assistant do, in the words of the consent page. */
export const SCOPE_WORDS: Readonly<Record<string, string>> = {
  [SCOPE_READ]: "read the requests it published for you and the offers delivered for them",
  [SCOPE_MANAGE]: "publish requests for you (sent to your e-mail address), change them and withdraw them",
};

/** The holder's paths: the provider is mounted under ISSUER_PATH, sign-in pages under SIGNIN_PATH. */
export const ISSUER_PATH = "/oauth";
export const SIGNIN_PATH = "/signin";
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";
