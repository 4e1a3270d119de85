/**
 * The operator page's words in English, Slovak and Czech (the holder's languages). English is the
 * reference: `OperatorWords` is its shape, so a catalogue that misses a text does not compile.
 * Categories (`http_5xx`, `timeout`, …), event types and ids are shown as the logs and
 * `doorbell deliveries` write them, in every language, so they can be searched for.
 */
import type { Lang } from "../model/languages.js";

const en = {
  title: "Deliveries",
  lead: "What this holder's delivery workers did: each endpoint's health, delivery over the last hours and days, the recent failed attempts and the doorbells given up on. Endpoint addresses, secrets and contacts are never shown here.",
  updated: (at: string) => `As of ${at}. Reload the page to see newer figures.`,
  endpoints: {
    heading: "Endpoints",
    caption: (most: number) =>
      `Subscriptions and their delivery state, the most recently changed first (at most ${most}).`,
    none: "No subscription yet.",
    channel: "Channel",
    subscriber: "Subscriber id",
    status: "Status",
    lastSuccess: "Last success",
    lastError: "Last error",
    failingSince: "Failing since",
    queued: "Queued",
    deadLetters: "Dead letters",
    health: "Health window",
    healthFigures: (successes: number, failures: number) => `${successes} delivered, ${failures} failed`,
    disabled: (reason: string) => `Disabled (${reason})`,
    disabledReasons: {
      "failing-too-long": "failing too long",
      "retries-exhausted": "retries exhausted",
    } as Record<string, string>,
    states: {
      healthy: "Healthy",
      failing: "Failing",
      suspended: "Suspended",
      disabled: "Disabled",
      ended: "Ended",
    } as Record<string, string>,
  },
  statuses: {
    pending_verification: "Waiting for its challenge",
    awaiting_approval: "Waiting for approval",
    active: "Active",
    suspended: "Suspended after failures",
    ended: "Ended",
  },
  channels: {
    push: "Push profile",
    mcp: "MCP Events (sketch)",
    "mcp-standard": "MCP Events (SEP-3415)",
    operator: "Operator webhook",
  },
  never: "Never",
  none: "None",
  chart: {
    heading: "Success and latency",
    hours: "The last 24 hours, by hour (UTC)",
    days: "The last 30 days, by day (UTC)",
    delivered: "Delivered",
    failed: "Failed",
    meanTime: "Mean attempt time",
    summary: (delivered: number, failed: number, rate: string, mean: string, longest: string) =>
      `${delivered} delivered and ${failed} failed attempts (${rate} delivered); mean attempt time ${mean}, longest ${longest}.`,
    nothing: "No delivery attempts in this period.",
    figures: "The figures as a table",
    from: "From",
    successRate: "Delivered share",
    longest: "Longest attempt",
    attempts: "Attempts",
    milliseconds: (ms: string) => `${ms} ms`,
  },
  recent: {
    heading: "Recent failed attempts",
    caption: "The newest first; successful attempts are counted in the chart above.",
    none: "No failed attempt is logged.",
    at: "When",
    type: "Doorbell",
    attempt: "Attempt",
    category: "Category",
    httpStatus: "HTTP status",
  },
  dead: {
    heading: "Dead letters",
    caption:
      "Doorbells given up on and not replayed yet. A replay queues the same doorbell again, with the same webhook-id, at the end of its subscription's queue.",
    none: "No dead letter waits for a replay.",
    reason: "Reason",
    attempts: "Attempts",
    action: "Action",
    replay: "Replay",
    replayLabel: (type: string, subscriber: string) => `Replay ${type} to ${subscriber}`,
    ended: "Not replayable: its subscription has ended.",
    reasons: {
      "retries-exhausted": "Retries exhausted",
      "too-large": "Too large (413)",
      gone: "Gone (410)",
    } as Record<string, string>,
  },
  notices: {
    replayed: (id: string) =>
      `Dead letter ${id} is queued again with its webhook-id; the worker sends it soon.`,
    unknown: "There is no such dead letter. Nothing changed.",
    already: "That dead letter was replayed already. Nothing changed.",
    ended: "Its subscription has ended, so nothing is delivered to it any more. Nothing changed.",
  },
  refusedTitle: "Not replayed",
};

export type OperatorWords = typeof en;

const sk: OperatorWords = {
  title: "Doručovanie",
  lead: "Čo robili doručovacie procesy tohto držiteľa: stav každého koncového bodu, doručovanie za posledné hodiny a dni, nedávne neúspešné pokusy a zvončeky, ktoré sa vzdali. Adresy koncových bodov, tajomstvá ani kontakty sa tu nikdy nezobrazujú.",
  updated: (at: string) => `Stav k ${at}. Novšie čísla uvidíte po opätovnom načítaní stránky.`,
  endpoints: {
    heading: "Koncové body",
    caption: (most: number) => `Odbery a stav ich doručovania, naposledy zmenené prvé (najviac ${most}).`,
    none: "Zatiaľ žiadny odber.",
    channel: "Kanál",
    subscriber: "Id odberateľa",
    status: "Stav",
    lastSuccess: "Posledný úspech",
    lastError: "Posledná chyba",
    failingSince: "Zlyháva od",
    queued: "V poradí",
    deadLetters: "Nedoručené",
    health: "Okno zdravia",
    healthFigures: (successes: number, failures: number) => `doručené: ${successes}, zlyhané: ${failures}`,
    disabled: (reason: string) => `Vypnutý (${reason})`,
    disabledReasons: {
      "failing-too-long": "zlyháva príliš dlho",
      "retries-exhausted": "vyčerpané opakovania",
    },
    states: {
      healthy: "Zdravý",
      failing: "Zlyháva",
      suspended: "Pozastavený",
      disabled: "Vypnutý",
      ended: "Ukončený",
    },
  },
  statuses: {
    pending_verification: "Čaká na overenie",
    awaiting_approval: "Čaká na schválenie",
    active: "Aktívny",
    suspended: "Pozastavený po zlyhaniach",
    ended: "Ukončený",
  },
  channels: {
    push: "Profil push",
    mcp: "Udalosti MCP (náčrt)",
    "mcp-standard": "Udalosti MCP (SEP-3415)",
    operator: "Webhook prevádzkovateľa",
  },
  never: "Nikdy",
  none: "Žiadne",
  chart: {
    heading: "Úspešnosť a odozva",
    hours: "Posledných 24 hodín, po hodinách (UTC)",
    days: "Posledných 30 dní, po dňoch (UTC)",
    delivered: "Doručené",
    failed: "Zlyhané",
    meanTime: "Priemerný čas pokusu",
    summary: (delivered: number, failed: number, rate: string, mean: string, longest: string) =>
      `Doručené pokusy: ${delivered}, zlyhané: ${failed} (doručených ${rate}); priemerný čas pokusu ${mean}, najdlhší ${longest}.`,
    nothing: "V tomto období nebol žiadny pokus o doručenie.",
    figures: "Čísla v tabuľke",
    from: "Od",
    successRate: "Podiel doručených",
    longest: "Najdlhší pokus",
    attempts: "Pokusy",
    milliseconds: (ms: string) => `${ms} ms`,
  },
  recent: {
    heading: "Nedávne neúspešné pokusy",
    caption: "Najnovšie prvé; úspešné pokusy započítava graf vyššie.",
    none: "Nie je zaznamenaný žiadny neúspešný pokus.",
    at: "Kedy",
    type: "Zvonček",
    attempt: "Pokus",
    category: "Kategória",
    httpStatus: "Stav HTTP",
  },
  dead: {
    heading: "Nedoručené zvončeky",
    caption:
      "Zvončeky, ktoré sa vzdali a ešte neboli znova odoslané. Opätovné odoslanie zaradí ten istý zvonček s tým istým webhook-id na koniec poradia jeho odberu.",
    none: "Žiadny nedoručený zvonček nečaká na opätovné odoslanie.",
    reason: "Dôvod",
    attempts: "Pokusy",
    action: "Akcia",
    replay: "Odoslať znova",
    replayLabel: (type: string, subscriber: string) => `Odoslať znova ${type} odberateľovi ${subscriber}`,
    ended: "Nedá sa odoslať znova: jeho odber sa skončil.",
    reasons: {
      "retries-exhausted": "Vyčerpané opakovania",
      "too-large": "Príliš veľký (413)",
      gone: "Zaniknutý (410)",
    },
  },
  notices: {
    replayed: (id: string) =>
      `Nedoručený zvonček ${id} je znova v poradí so svojím webhook-id; proces ho čoskoro odošle.`,
    unknown: "Taký nedoručený zvonček neexistuje. Nič sa nezmenilo.",
    already: "Tento zvonček už bol znova odoslaný. Nič sa nezmenilo.",
    ended: "Jeho odber sa skončil, takže sa mu už nič nedoručuje. Nič sa nezmenilo.",
  },
  refusedTitle: "Neodoslané znova",
};

const cs: OperatorWords = {
  title: "Doručování",
  lead: "Co dělaly doručovací procesy tohoto držitele: stav každého koncového bodu, doručování za poslední hodiny a dny, nedávné neúspěšné pokusy a zvonky, které se vzdaly. Adresy koncových bodů, tajemství ani kontakty se zde nikdy nezobrazují.",
  updated: (at: string) => `Stav k ${at}. Novější čísla uvidíte po opětovném načtení stránky.`,
  endpoints: {
    heading: "Koncové body",
    caption: (most: number) => `Odběry a stav jejich doručování, naposledy změněné první (nejvýše ${most}).`,
    none: "Zatím žádný odběr.",
    channel: "Kanál",
    subscriber: "Id odběratele",
    status: "Stav",
    lastSuccess: "Poslední úspěch",
    lastError: "Poslední chyba",
    failingSince: "Selhává od",
    queued: "Ve frontě",
    deadLetters: "Nedoručené",
    health: "Okno zdraví",
    healthFigures: (successes: number, failures: number) => `doručeno: ${successes}, selhalo: ${failures}`,
    disabled: (reason: string) => `Vypnutý (${reason})`,
    disabledReasons: {
      "failing-too-long": "selhává příliš dlouho",
      "retries-exhausted": "vyčerpaná opakování",
    },
    states: {
      healthy: "Zdravý",
      failing: "Selhává",
      suspended: "Pozastavený",
      disabled: "Vypnutý",
      ended: "Ukončený",
    },
  },
  statuses: {
    pending_verification: "Čeká na ověření",
    awaiting_approval: "Čeká na schválení",
    active: "Aktivní",
    suspended: "Pozastavený po selháních",
    ended: "Ukončený",
  },
  channels: {
    push: "Profil push",
    mcp: "Události MCP (náčrt)",
    "mcp-standard": "Události MCP (SEP-3415)",
    operator: "Webhook provozovatele",
  },
  never: "Nikdy",
  none: "Žádné",
  chart: {
    heading: "Úspěšnost a odezva",
    hours: "Posledních 24 hodin, po hodinách (UTC)",
    days: "Posledních 30 dní, po dnech (UTC)",
    delivered: "Doručeno",
    failed: "Selhalo",
    meanTime: "Průměrná doba pokusu",
    summary: (delivered: number, failed: number, rate: string, mean: string, longest: string) =>
      `Doručené pokusy: ${delivered}, neúspěšné: ${failed} (doručeno ${rate}); průměrná doba pokusu ${mean}, nejdelší ${longest}.`,
    nothing: "V tomto období nebyl žádný pokus o doručení.",
    figures: "Čísla v tabulce",
    from: "Od",
    successRate: "Podíl doručených",
    longest: "Nejdelší pokus",
    attempts: "Pokusy",
    milliseconds: (ms: string) => `${ms} ms`,
  },
  recent: {
    heading: "Nedávné neúspěšné pokusy",
    caption: "Nejnovější první; úspěšné pokusy započítává graf výše.",
    none: "Není zaznamenán žádný neúspěšný pokus.",
    at: "Kdy",
    type: "Zvonek",
    attempt: "Pokus",
    category: "Kategorie",
    httpStatus: "Stav HTTP",
  },
  dead: {
    heading: "Nedoručené zvonky",
    caption:
      "Zvonky, které se vzdaly a dosud nebyly znovu odeslány. Opětovné odeslání zařadí tentýž zvonek se stejným webhook-id na konec fronty jeho odběru.",
    none: "Žádný nedoručený zvonek nečeká na opětovné odeslání.",
    reason: "Důvod",
    attempts: "Pokusy",
    action: "Akce",
    replay: "Odeslat znovu",
    replayLabel: (type: string, subscriber: string) => `Odeslat znovu ${type} odběrateli ${subscriber}`,
    ended: "Nelze odeslat znovu: jeho odběr skončil.",
    reasons: {
      "retries-exhausted": "Vyčerpaná opakování",
      "too-large": "Příliš velký (413)",
      gone: "Zaniklý (410)",
    },
  },
  notices: {
    replayed: (id: string) =>
      `Nedoručený zvonek ${id} je znovu ve frontě se svým webhook-id; proces jej brzy odešle.`,
    unknown: "Takový nedoručený zvonek neexistuje. Nic se nezměnilo.",
    already: "Tento zvonek už byl znovu odeslán. Nic se nezměnilo.",
    ended: "Jeho odběr skončil, takže se mu už nic nedoručuje. Nic se nezměnilo.",
  },
  refusedTitle: "Neodesláno znovu",
};

const CATALOGUES: Readonly<Record<Lang, OperatorWords>> = { en, sk, cs };

export function operatorWordsFor(lang: Lang): OperatorWords {
  return CATALOGUES[lang];
}
