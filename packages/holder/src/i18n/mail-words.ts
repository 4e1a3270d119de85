/**
 * The mails' words in English, Slovak and Czech. A person's mails are written in the language of
 * the consent text they agreed to (consent-texts.ts `consentLanguage`). English is the reference:
 * `MailWords` is its shape.
 */

import type { Lang } from "../model/languages.js";
import type { PluralForms } from "./format.js";
import { messagesFor } from "./messages/index.js";

const en = {
  buttonFallback: "If the button does not work, open this address:",
  footer: (holder: string) =>
    `You get this e-mail from ${holder} because of an intent you confirmed or asked to confirm. You can see its matches or withdraw it at any time, in one step:`,
  footerLabel: "Manage or withdraw this intent",
  confirmation: {
    subject: (holder: string) => `Confirm your intent at ${holder}`,
    hello: "Hello,",
    someone: (holder: string) =>
      `Someone (we hope you) gave this e-mail address on the ${holder} consent page for this intent:`,
    hiddenLimit: "A private price limit is set; it is kept sealed and never shown.",
    nothingUntil: (date: string) =>
      `Nothing happens until you confirm. Once you do, the intent is active and we send you matching offers by e-mail. The link works until ${date}.`,
    action: "Confirm this intent",
    notYou: "If this was not you, ignore this e-mail: without confirmation the intent ends on its own.",
  },
  digest: {
    subject: { one: "A new offer for your intent", other: "# new offers for your intent" } as PluralForms,
    intro: (holder: string) => `${holder} found offers that match your intent:`,
    more: (count: number) => `…and ${count} more on your manage page.`,
  },
  withdrawn: {
    subject: "Your intent was withdrawn",
    at: (date: string) => `This intent was withdrawn at ${date}:`,
    after: (holder: string) =>
      `${holder} sends no more offers for it, and your e-mail address is no longer kept for it. If you did not withdraw it yourself, the assistant that published it did.`,
  },
  approval: {
    subject: "Allow an assistant to be notified about your intent?",
    address: (host: string) => `the address ${host}`,
    relayed: (relay: string, host: string) => `${relay}, relayed through ${host}`,
    asked: (holder: string, who: string) =>
      `An assistant asked ${holder} to notify ${who} when something changes for this intent:`,
    nothingUntil: "Nothing is sent until you allow it, and you can stop it at any time from the manage page.",
    action: "Review and allow notifications",
  },
  signIn: {
    subject: (holder: string) => `Sign in to ${holder}`,
    asked: (holder: string) =>
      `Someone asked to sign in to ${holder} with this address, for an assistant that calls itself:`,
    open: "Open this link to sign in (it works once, for 15 minutes):",
    link: "Sign in",
    linkAfter: " (it works once, for 15 minutes).",
    notYou: "If it was not you, ignore this e-mail: nothing happens without the link.",
  },
  published: {
    subject: (holder: string) => `Your request is active – ${holder}`,
    published: (holder: string) => `An assistant you signed in to ${holder} published this request for you:`,
    activeUntil: (until: string) =>
      `It is active until ${until}. Offers that match it are sent to this address.`,
    manage: (url: string) => `See it, withdraw it, or stop an assistant's access here: ${url}`,
  },
  renewalOffer: {
    subject: (day: string, holder: string) => `Keep your request open until ${day}? – ${holder}`,
    asks: (holder: string, day: string) =>
      `An assistant you signed in to ${holder} asks to keep this request open until ${day}:`,
    endsOn: (day: string) => `It ends on ${day} unless you renew it. Nothing changes until you do.`,
    howTo: (url: string) => `To renew it, press Renew on its page: ${url}`,
  },
};

export type MailWords = typeof en;

const sk: MailWords = {
  buttonFallback: "Ak tlačidlo nefunguje, otvorte túto adresu:",
  footer: (holder: string) =>
    `Tento e-mail vám posiela služba ${holder}, pretože ste potvrdili dopyt alebo ste požiadali o jeho potvrdenie. Jeho ponuky si môžete pozrieť alebo ho zrušiť kedykoľvek, jedným krokom:`,
  footerLabel: "Spravovať alebo zrušiť tento dopyt",
  confirmation: {
    subject: (holder: string) => `Potvrďte svoj dopyt v službe ${holder}`,
    hello: "Dobrý deň,",
    someone: (holder: string) =>
      `niekto (dúfame, že vy) zadal túto e-mailovú adresu na stránke súhlasu služby ${holder} pre tento dopyt:`,
    hiddenLimit: "Je nastavený súkromný cenový limit; zostáva zapečatený a nikdy sa nezobrazí.",
    nothingUntil: (date: string) =>
      `Kým dopyt nepotvrdíte, nič sa nestane. Po potvrdení bude aktívny a zodpovedajúce ponuky vám budeme posielať e-mailom. Odkaz platí do ${date}.`,
    action: "Potvrdiť tento dopyt",
    notYou: "Ak ste to neboli vy, tento e-mail ignorujte: bez potvrdenia sa dopyt sám skončí.",
  },
  digest: {
    subject: {
      one: "Nová ponuka k vášmu dopytu",
      few: "# nové ponuky k vášmu dopytu",
      other: "# nových ponúk k vášmu dopytu",
    },
    intro: (holder: string) => `Služba ${holder} našla ponuky, ktoré zodpovedajú vášmu dopytu:`,
    more: (count: number) => `…a ešte ${count} na stránke správy dopytu.`,
  },
  withdrawn: {
    subject: "Váš dopyt bol zrušený",
    at: (date: string) => `Tento dopyt bol zrušený ${date}:`,
    after: (holder: string) =>
      `Služba ${holder} vám k nemu už nebude posielať ponuky a vaša e-mailová adresa sa preň už neuchováva. Ak ste ho nezrušili vy, zrušil ho asistent, ktorý ho zverejnil.`,
  },
  approval: {
    subject: "Povoliť asistentovi upozornenia na váš dopyt?",
    address: (host: string) => `adresu ${host}`,
    relayed: (relay: string, host: string) => `${relay} cez sprostredkovateľa ${host}`,
    asked: (holder: string, who: string) =>
      `Asistent požiadal službu ${holder}, aby upozorňovala ${who}, keď sa pri tomto dopyte niečo zmení:`,
    nothingUntil:
      "Kým to nepovolíte, nič sa neposiela, a kedykoľvek to môžete zastaviť na stránke správy dopytu.",
    action: "Pozrieť a povoliť upozornenia",
  },
  signIn: {
    subject: (holder: string) => `Prihlásenie do služby ${holder}`,
    asked: (holder: string) =>
      `Niekto požiadal o prihlásenie do služby ${holder} s touto adresou, pre asistenta, ktorý sa nazýva:`,
    open: "Prihlásite sa otvorením tohto odkazu (môžete ho použiť raz, do 15 minút):",
    link: "Prihlásiť sa",
    linkAfter: " (odkaz môžete použiť raz, do 15 minút).",
    notYou: "Ak ste to neboli vy, tento e-mail ignorujte: bez odkazu sa nič nestane.",
  },
  published: {
    subject: (holder: string) => `Váš dopyt je aktívny – ${holder}`,
    published: (holder: string) =>
      `Asistent, pre ktorého ste sa prihlásili do služby ${holder}, za vás zverejnil tento dopyt:`,
    activeUntil: (until: string) =>
      `Je aktívny do ${until}. Ponuky, ktoré mu zodpovedajú, budú chodiť na túto adresu.`,
    manage: (url: string) => `Tu si ho môžete pozrieť, zrušiť ho alebo zastaviť prístup asistenta: ${url}`,
  },
  renewalOffer: {
    subject: (day: string, holder: string) => `Predĺžiť váš dopyt do ${day}? – ${holder}`,
    asks: (holder: string, day: string) =>
      `Asistent, pre ktorého ste sa prihlásili do služby ${holder}, žiada predĺžiť tento dopyt do ${day}:`,
    endsOn: (day: string) => `Skončí sa ${day}, ak ho nepredĺžite. Kým to neurobíte, nič sa nemení.`,
    howTo: (url: string) => `Dopyt predĺžite tlačidlom Predĺžiť na jeho stránke: ${url}`,
  },
};

const cs: MailWords = {
  buttonFallback: "Pokud tlačítko nefunguje, otevřete tuto adresu:",
  footer: (holder: string) =>
    `Tento e-mail vám posílá služba ${holder}, protože jste potvrdili poptávku nebo jste požádali o její potvrzení. Její nabídky si můžete prohlédnout nebo ji zrušit kdykoli, jedním krokem:`,
  footerLabel: "Spravovat nebo zrušit tuto poptávku",
  confirmation: {
    subject: (holder: string) => `Potvrďte svou poptávku ve službě ${holder}`,
    hello: "Dobrý den,",
    someone: (holder: string) =>
      `někdo (doufáme, že vy) zadal tuto e-mailovou adresu na stránce souhlasu služby ${holder} pro tuto poptávku:`,
    hiddenLimit: "Je nastaven soukromý cenový limit; zůstává zapečetěný a nikdy se nezobrazí.",
    nothingUntil: (date: string) =>
      `Dokud poptávku nepotvrdíte, nic se nestane. Po potvrzení bude aktivní a odpovídající nabídky vám budeme posílat e-mailem. Odkaz platí do ${date}.`,
    action: "Potvrdit tuto poptávku",
    notYou: "Pokud jste to nebyli vy, tento e-mail ignorujte: bez potvrzení poptávka sama skončí.",
  },
  digest: {
    subject: {
      one: "Nová nabídka k vaší poptávce",
      few: "# nové nabídky k vaší poptávce",
      other: "# nových nabídek k vaší poptávce",
    },
    intro: (holder: string) => `Služba ${holder} našla nabídky, které odpovídají vaší poptávce:`,
    more: (count: number) => `…a ještě ${count} na stránce správy poptávky.`,
  },
  withdrawn: {
    subject: "Vaše poptávka byla zrušena",
    at: (date: string) => `Tato poptávka byla zrušena ${date}:`,
    after: (holder: string) =>
      `Služba ${holder} vám k ní už nebude posílat nabídky a vaše e-mailová adresa se pro ni už neuchovává. Pokud jste ji nezrušili vy, zrušil ji asistent, který ji zveřejnil.`,
  },
  approval: {
    subject: "Povolit asistentovi upozornění na vaši poptávku?",
    address: (host: string) => `adresu ${host}`,
    relayed: (relay: string, host: string) => `${relay} přes zprostředkovatele ${host}`,
    asked: (holder: string, who: string) =>
      `Asistent požádal službu ${holder}, aby upozorňovala ${who}, když se u této poptávky něco změní:`,
    nothingUntil:
      "Dokud to nepovolíte, nic se neposílá, a kdykoli to můžete zastavit na stránce správy poptávky.",
    action: "Zobrazit a povolit upozornění",
  },
  signIn: {
    subject: (holder: string) => `Přihlášení do služby ${holder}`,
    asked: (holder: string) =>
      `Někdo požádal o přihlášení do služby ${holder} s touto adresou, pro asistenta, který se nazývá:`,
    open: "Přihlásíte se otevřením tohoto odkazu (můžete ho použít jednou, do 15 minut):",
    link: "Přihlásit se",
    linkAfter: " (odkaz můžete použít jednou, do 15 minut).",
    notYou: "Pokud jste to nebyli vy, tento e-mail ignorujte: bez odkazu se nic nestane.",
  },
  published: {
    subject: (holder: string) => `Vaše poptávka je aktivní – ${holder}`,
    published: (holder: string) =>
      `Asistent, pro kterého jste se přihlásili do služby ${holder}, za vás zveřejnil tuto poptávku:`,
    activeUntil: (until: string) =>
      `Je aktivní do ${until}. Nabídky, které jí odpovídají, budou chodit na tuto adresu.`,
    manage: (url: string) =>
      `Zde si ji můžete prohlédnout, zrušit ji nebo zastavit přístup asistenta: ${url}`,
  },
  renewalOffer: {
    subject: (day: string, holder: string) => `Prodloužit vaši poptávku do ${day}? – ${holder}`,
    asks: (holder: string, day: string) =>
      `Asistent, pro kterého jste se přihlásili do služby ${holder}, žádá o prodloužení této poptávky do ${day}:`,
    endsOn: (day: string) => `Skončí ${day}, pokud ji neprodloužíte. Dokud to neuděláte, nic se nemění.`,
    howTo: (url: string) => `Poptávku prodloužíte tlačítkem Prodloužit na její stránce: ${url}`,
  },
};

const WORDS: Readonly<Record<Lang, MailWords>> = { en, sk, cs };

export function mailWordsFor(lang: Lang): MailWords {
  return WORDS[lang];
}

/** What the assistant learns from a doorbell, in the person's words (push profile §6 rule 3). */
export function notificationPromise(lang: Lang): string {
  return messagesFor(lang).notifications.promise;
}
