/**
 * oidc-provider's error page in the holder's own layout (issue #16 item 3): the holder's security
 * headers and content security policy, nothing loaded from anywhere else (the library's default
 * page imports Google Fonts), and only the error's code and description, escaped.
 */
import { Layout } from "../web/pages/layout.js";
import { PAGE_HEADERS } from "../web/pages/security.js";

interface KoaLikeContext {
  type: string;
  body: unknown;
  set(name: string, value: string): void;
}

const WORDS: Readonly<Record<string, string>> = {
  invalid_request: "The assistant's sign-in request is not valid.",
  invalid_client: "The assistant asking to sign you in is not known here.",
  invalid_redirect_uri: "The assistant's return address is not one it registered.",
  invalid_scope: "The assistant asked for access this holder does not offer.",
  invalid_target: "The assistant asked for access to something this holder does not serve.",
  unsupported_response_type: "The assistant's sign-in request is not supported.",
  access_denied: "Access was not given.",
  server_error: "Something went wrong on our side.",
};

export function oauthErrorPage(holderName: string) {
  return async (ctx: KoaLikeContext, out: Record<string, unknown>): Promise<void> => {
    const code = typeof out.error === "string" ? out.error : "server_error";
    const description = typeof out.error_description === "string" ? out.error_description.slice(0, 300) : "";
    const page = (
      <Layout title="Sign-in stopped" holderName={holderName}>
        <h1>Sign-in stopped</h1>
        <p>{WORDS[code] ?? "The sign-in could not go on."}</p>
        <p class="muted">
          Go back to your assistant and start again. If it happens again, the assistant's developer can read
          this: <code>{code}</code>
          {description === "" ? "" : `: ${description}`}
        </p>
      </Layout>
    );
    for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
    ctx.type = "html";
    ctx.body = `<!doctype html>${await page.toString()}`;
  };
}
