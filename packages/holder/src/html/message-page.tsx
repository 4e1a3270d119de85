/** The page that only explains: an error, a used link, a refused form. Every concern's pages use it. */
import type { Child, FC } from "hono/jsx";
import type { Lang } from "../model/languages.js";
import { Layout } from "./layout.js";

/** Any page that only explains: an error, a used link, a refused form. */
export const MessagePage: FC<{
  holderName: string;
  title: string;
  lang?: Lang;
  langSwitch?: boolean;
  children?: Child;
}> = (props) => (
  <Layout title={props.title} holderName={props.holderName} lang={props.lang} langSwitch={props.langSwitch}>
    <h1>{props.title}</h1>
    {props.children}
  </Layout>
);
