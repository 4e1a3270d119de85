/**
 * What a concern's page routes are built with: one request language, the shared answers and the
 * form-action skeleton, around one form guard. One kit serves all the person's pages, so a form
 * token one page issues is checked by the same guard on the page it posts to.
 */
import type { Logger } from "pino";
import { createFormActions, type FormActions } from "./form-action.js";
import { createPageAnswers, type PageAnswers } from "./page-answers.js";
import { createPageLanguage, type PageLanguage } from "./page-language.js";
import { createFormGuard, type FormGuard } from "./security.js";

export type { GoneAnswer } from "./page-answers.js";
export { type Paragraph, sentence } from "./page-language.js";

export interface PageKit extends PageLanguage, PageAnswers, FormActions {
  readonly holderName: string;
  readonly guard: FormGuard;
}

export function createPageKit(options: {
  holderName: string;
  publicUrl: string;
  /** Randomness for the form tokens (default `crypto.randomBytes`). */
  random?: ((size: number) => Uint8Array) | undefined;
  /** Failures the pages cannot explain (500s) are logged here, without the URL (it holds a token). */
  log?: Pick<Logger, "error" | "debug"> | undefined;
}): PageKit {
  const guard = createFormGuard({
    publicUrl: options.publicUrl,
    ...(options.random ? { random: options.random } : {}),
  });
  const language = createPageLanguage();
  const answers = createPageAnswers(options.holderName, language, options.log);
  return {
    holderName: options.holderName,
    guard,
    ...language,
    ...answers,
    ...createFormActions(guard, answers),
  };
}
