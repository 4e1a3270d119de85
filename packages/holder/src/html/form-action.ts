/**
 * The skeleton every person's page route shares: the page token from the URL (a link that cannot
 * be one of ours is answered as unknown), for a POST the guarded form (security.ts), then the
 * route's own work, whose failures become pages (page-answers.tsx). Routes write only their work.
 */
import type { Context } from "hono";
import type { GoneAnswer, PageAnswers } from "./page-answers.js";
import { type FormGuard, isTokenShaped, readForm } from "./security.js";

export interface TokenRouteOptions {
  /** A further URL part the route checks before anything else (an id beside the token). */
  also?: (c: Context) => boolean;
}

export interface FormActions {
  /** The token from the URL, or undefined when it cannot be one of ours. */
  tokenOf(c: Context): string | undefined;
  /** Reads and checks a POSTed form: the guard first, then the fields. */
  postedForm(c: Context): Promise<Record<string, string> | Response>;
  /** A GET behind a page token. */
  tokenPage(
    gone: GoneAnswer,
    work: (c: Context, token: string) => Promise<Response>,
    options?: TokenRouteOptions,
  ): (c: Context) => Promise<Response>;
  /** A POSTed form behind a page token: the guarded fields are handed to `work`. */
  tokenForm(
    gone: GoneAnswer,
    work: (c: Context, token: string, fields: Record<string, string>) => Promise<Response>,
    options?: TokenRouteOptions,
  ): (c: Context) => Promise<Response>;
}

export function createFormActions(guard: FormGuard, answers: PageAnswers): FormActions {
  const tokenOf = (c: Context): string | undefined => {
    const token = c.req.param("token");
    return isTokenShaped(token) ? token : undefined;
  };
  const postedForm = async (c: Context): Promise<Record<string, string> | Response> => {
    const form = await readForm(c);
    if (!form.ok) return answers.badForm(c, form.reason);
    const refused = guard.check(c, form.fields.csrf);
    if (refused !== undefined) return answers.refusedForm(c, refused);
    return form.fields;
  };
  const tokenPage: FormActions["tokenPage"] = (gone, work, options) => async (c) => {
    const token = tokenOf(c);
    if (token === undefined || options?.also?.(c) === false) return answers.unknownLink(c);
    try {
      return await work(c, token);
    } catch (error) {
      return answers.fail(c, error, gone);
    }
  };
  const tokenForm: FormActions["tokenForm"] = (gone, work, options) =>
    tokenPage(
      gone,
      async (c, token) => {
        const fields = await postedForm(c);
        if (fields instanceof Response) return fields;
        return await work(c, token, fields);
      },
      options,
    );
  return { tokenOf, postedForm, tokenPage, tokenForm };
}
