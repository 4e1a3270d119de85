/**
 * The catalogues' shape is English's (sk and cs are typed `Messages` and `MailWords`, so a missing
 * or misnamed key does not compile); here, no Slovak or Czech entry is the English one: each text,
 * and each sentence a function makes, is its own words. The few that are the same in every
 * language (an abbreviation, a word both languages borrowed) are listed by path.
 */
import { describe, expect, it } from "vitest";
import { mailWordsFor } from "../../src/i18n/mail-words.js";
import { messagesFor } from "../../src/i18n/messages/index.js";
import { operatorWordsFor } from "../../src/i18n/operator-words.js";
import type { Lang } from "../../src/model/languages.js";

/** One value for every parameter: a string, a number and a limit hint at once. */
const ANY = Object.assign(Object.create({ toString: () => "§" }), {
  name: "§",
  points: 2,
  durationSeconds: 2,
  flag: "§",
  variable: "§",
});

/** Every text of a catalogue by its path; a function's text is what it says for ANY. */
function texts(value: unknown, path = ""): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (node: unknown, at: string): void => {
    if (typeof node === "function") visit(node(ANY, ANY, ANY), at);
    else if (typeof node === "string") found.set(at, node);
    else if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) visit(item, `${at}[${i}]`);
    } else if (typeof node === "object" && node !== null) {
      for (const [key, item] of Object.entries(node)) visit(item, at === "" ? key : `${at}.${key}`);
    }
  };
  visit(value, path);
  return found;
}

/** Words Slovak and Czech write as English does. */
const SAME_EVERYWHERE = new Set(["criteria.fuels.lpg", "criteria.fuels.hybrid", "chart.milliseconds"]);

const hasWords = (text: string) => /\p{L}{2}/u.test(text.replaceAll("§", ""));

describe.each(["sk", "cs"] as const)("%s catalogues", (lang: Exclude<Lang, "en">) => {
  it.each([
    ["pages", messagesFor],
    ["mails", mailWordsFor],
    ["operator page", operatorWordsFor],
  ] as const)("every %s text is its own words, not the English one", (_, catalogueFor) => {
    const english = texts(catalogueFor("en"));
    const other = texts(catalogueFor(lang));
    // Slovak and Czech count in one more plural form (2–4) than English.
    const paths = [...other.keys()].filter((at) => !at.endsWith(".few"));
    expect(paths.sort()).toEqual([...english.keys()].sort());
    const same = [...other].filter(
      ([at, text]) => !SAME_EVERYWHERE.has(at) && hasWords(text) && text === english.get(at),
    );
    expect(same).toEqual([]);
  });
});
