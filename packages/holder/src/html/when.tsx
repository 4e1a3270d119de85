/** A moment as pages show it: machine-readable in `datetime`, in the page's language as text. */
import type { FC } from "hono/jsx";
import { DEFAULT_LANG, type Lang } from "../model/languages.js";
import { formatDateTime, isoDateTime } from "./format.js";

export const When: FC<{ value: string | number; lang?: Lang }> = ({ value, lang = DEFAULT_LANG }) => (
  <time datetime={isoDateTime(value)}>{formatDateTime(value, lang)}</time>
);
