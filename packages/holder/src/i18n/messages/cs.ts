/** The pages' words in Czech (same shape as en.ts). */
import type { LimitHint } from "../../limits/limit-hints.js";
import type { PluralForms } from "../format.js";
import type { Messages } from "./en.js";

export const cs: Messages = {
  layout: {
    skip: "Přeskočit na obsah",
    footer: (holder: string) =>
      `${holder} uchovává poptávky, které AI asistenti zveřejňují za lidi, kteří chtějí něco koupit, a posílá jim e-mailem odpovídající nabídky ze svého trhu. Vaše e-mailová adresa se nikdy nedostane k prodejcům ani k asistentům.`,
    languages: "Jazyk",
  },
  duration: {
    minutes: { one: "# minutu", few: "# minuty", other: "# minut" } as PluralForms,
    hours: { one: "# hodinu", few: "# hodiny", other: "# hodin" } as PluralForms,
    days: { one: "# den", few: "# dny", other: "# dní" } as PluralForms,
  },
  facts: {
    request: "Znění",
    what: "Co",
    where: "Kde",
    budget: "Rozpočet",
    notGiven: "Neuveden",
    hiddenLimit: "Skrytý limit",
    hiddenLimitSet:
      "Skrytý limit je nastaven. Jeho hodnota je zapečetěná: nikdy se nezobrazí, ani tady, ani nikde jinde.",
    none: "Žádný",
    buyBy: "Koupit do",
    validUntil: "Platí do",
    visibility: "Viditelnost",
  },
  status: {
    prefix: "Stav:",
    awaiting_consent: {
      label: "Čeká na souhlas",
      explain: "S touto poptávkou zatím nikdo nesouhlasil, proto se nic neporovnává ani neposílá.",
    },
    awaiting_email_confirmation: {
      label: "Čeká na potvrzení e-mailu",
      explain: "Otevřete potvrzovací odkaz, který jsme vám poslali e-mailem, a poptávka se aktivuje.",
    },
    active: {
      label: "Aktivní",
      explain: "Nové nabídky porovnáváme s touto poptávkou a ty, které se hodí, vám pošleme e-mailem.",
    },
    expired: { label: "Vypršela", explain: "Tato poptávka skončila. Už se nic neporovnává ani neposílá." },
    withdrawn: {
      label: "Zrušena",
      explain: "Tuto poptávku jste zrušili. Už se nic neporovnává ani neposílá.",
    },
  },
  visibility: {
    private: "Soukromá: porovnává se jen s vlastním katalogem této služby.",
    pseudonymous:
      "Pod pseudonymem: prodejci mohou poptávku vidět pod pseudonymem a odpovědět na ni; váš e-mail nikdy neuvidí.",
  },
  criteria: {
    vehicles: "Vozidla",
    property: "Nemovitosti",
    madeIn: (year: number) => `Vyrobeno v roce ${year} nebo později`,
    mileage: (km: string) => `Nejvýše ${km} km najeto`,
    fuel: (fuel: string) => `Palivo: ${fuel}`,
    fuels: { petrol: "benzín", diesel: "nafta", hybrid: "hybrid", electric: "elektřina", lpg: "LPG" },
    kind: (kind: string) => `Druh: ${kind}`,
    rooms: { one: "Alespoň 1 pokoj", few: "Alespoň # pokoje", other: "Alespoň # pokojů" } as PluralForms,
    area: (m2: string) => `Alespoň ${m2} m²`,
  },
  consent: {
    title: "Souhlas s uchováním poptávky",
    errorTitle: "Chyba: souhlas s uchováním poptávky",
    problems: "Zkontrolujte prosím formulář",
    lead: (holder: string) =>
      `AI asistent požádal službu ${holder}, aby pro vás uchovávala tuto poptávku a posílala vám e-mailem odpovídající nabídky. Nic se nestane, dokud níže nevyjádříte souhlas a nepotvrdíte svou e-mailovou adresu.`,
    linkWorksUntil: { before: "Tento odkaz funguje jednou, a to do ", after: "." },
    theRequest: "Poptávka",
    consentText: "Text souhlasu",
    version: (version: string) => `Verze ${version}`,
    onlyInEnglish:
      "Provozovatel této služby zatím nemá text souhlasu v češtině, proto je uveden v angličtině. Souhlasíte s tímto anglickým textem.",
    email: "Vaše e-mailová adresa",
    emailHint: "Na tuto adresu pošleme jeden odkaz, abychom ověřili, že je vaše. Prodejci ji nikdy neuvidí.",
    errorPrefix: "Chyba:",
    agree: (version: string) => `Souhlasím s výše uvedeným textem souhlasu (verze ${version}).`,
    submit: "Souhlasit a poslat potvrzovací e-mail",
    errors: {
      version:
        "Text souhlasu se změnil od chvíle, kdy jste tuto stránku otevřeli. Přečtěte si ho prosím znovu a vyjádřete souhlas.",
      emailMissing: "Zadejte svou e-mailovou adresu.",
      emailInvalid: "Tato e-mailová adresa není platná. Zadejte adresu ve tvaru jmeno@example.cz.",
      consent: "Zaškrtnutím políčka vyjádřete souhlas s textem souhlasu.",
    },
  },
  checkEmail: {
    title: "Zkontrolujte si e-mail",
    notice: "Děkujeme. Na zadanou adresu jsme poslali potvrzovací odkaz.",
    lead: (duration: string) =>
      `Otevřete odkaz v tom e-mailu a vaše poptávka se aktivuje. Do té doby se nic neporovnává ani neposílá. Odkaz platí ${duration}.`,
    everyMail:
      "Každý náš e-mail obsahuje odkaz, kde si můžete prohlédnout svou poptávku a její nabídky nebo ji zrušit.",
    mailbox: {
      before: "Tento server neposílá skutečné e-maily: přečtete si je v ",
      link: "místní schránce",
      after: ".",
    },
  },
  confirm: {
    title: "Potvrďte svou e-mailovou adresu",
    lead: "Stisknutím tlačítka potvrdíte, že tato e-mailová adresa je vaše, a spustíte svou poptávku.",
    button: "Potvrdit a spustit mou poptávku",
    why: "Žádáme o stisknutí tlačítka, protože některé e-mailové programy otevírají odkazy samy; samotné otevření této stránky nic nezmění.",
    usedTitle: "Tato e-mailová adresa je už potvrzená",
    used: "Tento potvrzovací odkaz už byl použit: vaše poptávka je aktivní a tady už není co stisknout.",
    usedManage:
      "Chcete-li si prohlédnout její nabídky nebo ji zrušit, otevřete odkaz na správu poptávky na konci kteréhokoli našeho e-mailu.",
    goneTitle: "Tento potvrzovací odkaz už nefunguje",
    gone: "Už byl použit, nebo mu vypršela platnost.",
    goneNext:
      "Pokud je vaše poptávka aktivní, odkaz na ni najdete v každém e-mailu, který jsme vám poslali. Jinak požádejte svého asistenta, aby poptávku zveřejnil znovu.",
  },
  active: {
    title: "Vaše poptávka je aktivní",
    notice: "Vaše e-mailová adresa je potvrzená. Odpovídající nabídky vám pošleme e-mailem.",
    manageLink: {
      before: "",
      link: "Její nabídky si můžete prohlédnout nebo ji zrušit",
      after: " kdykoli. Stejný odkaz je v každém e-mailu, který vám pošleme.",
    },
    everyMail: "Každý náš e-mail končí odkazem, kde si můžete prohlédnout nabídky k poptávce nebo ji zrušit",
    mailbox: { before: " (tento server ukládá e-maily do ", link: "místní schránky", after: ")" },
  },
  manage: {
    title: "Vaše poptávka",
    offers: (count: number) => `Nabídky, které jsme vám poslali (${count})`,
    noOffers: "Zatím žádná odpovídající nabídka. Jakmile nějaká přijde, hned vám ji pošleme e-mailem.",
    sellerAnswer: "Odpověď prodejce na vaši poptávku.",
    sentTo: "Odesláno ",
    withdraw: "Zrušení",
    withdrawExplain: "Zrušením se porovnávání i e-maily okamžitě zastaví. Nelze to vrátit zpět.",
    withdrawButton: "Zrušit tuto poptávku",
    renew: "Prodloužit",
    renewExplain:
      "Nechte poptávku otevřenou déle: zvolte nový poslední den. Můžete to udělat jen vy, na této stránce.",
    renewLabel: "Nový poslední den",
    renewButton: "Prodloužit tuto poptávku",
    ended: "Tato poptávka skončila; není co rušit.",
  },
  withdrawn: {
    title: "Vaše poptávka je zrušena",
    notice: "Hotovo. Už se nic neporovnává a další nabídky k ní vám neposíláme.",
    back: "Zpět na poptávku",
  },
  mailbox: {
    title: "Místní schránka",
    explain:
      "Pro vývoj: tento server nemá nastavený SMTP server, proto se e-maily, které by poslal, ukládají sem. Přečíst si je může kdokoli, kdo otevře tuto stránku.",
    empty: "Zatím žádné e-maily.",
    newestFirst: "Nejnovější nahoře",
    received: "Přijato",
    to: "Komu",
    subject: "Předmět",
    back: "Zpět do schránky",
    message: "Zpráva",
  },
  messages: {
    unknownTitle: "Tento odkaz neznáme",
    unknown: [
      "Zkontrolujte, zda se otevřel celý odkaz: některé e-mailové programy dlouhé odkazy zalamují do více řádků.",
      "Pokud jste ho dostali od asistenta, požádejte ho o odkaz znovu.",
    ],
    usedTitle: "Tento odkaz už byl použit",
    used: [
      "Přes tento odkaz už někdo souhlasil s uchováním poptávky a každý odkaz lze použít jen jednou: poptávka patří tomu, kdo souhlasil první.",
      "Pokud jste to byli vy, otevřete potvrzovací e-mail, který jsme vám poslali. Pokud ne, požádejte svého asistenta, aby poptávku zveřejnil znovu, a otevřete nový odkaz.",
    ],
    expiredTitle: "Platnost tohoto odkazu vypršela",
    expired: [
      "Poptávka, se kterou do jednoho dne nikdo nesouhlasí, se smaže, a s ní i její odkaz.",
      "Požádejte svého asistenta, aby poptávku zveřejnil znovu, a otevřete nový odkaz.",
    ],
    rateLimitedTitle: "Příliš mnoho požadavků",
    rateLimited: "Počkejte prosím minutu a zkuste to znovu.",
    mailLimitedTitle: "Počkejte prosím",
    mailLimited: (wait: string) =>
      `Právě bylo vyžádáno příliš mnoho e-mailů. Abychom chránili lidi, kterým by přišly, chvíli žádné další neposíláme: zkuste to znovu za ${wait}.`,
    limitHint: (limit: LimitHint) =>
      `Pro provozovatele: byl dosažen limit ${limit.name} (${limit.points} za ${limit.durationSeconds} s); změní ho ${limit.flag} (nebo ${limit.variable}).`,
    unavailableTitle: "Zkuste to prosím za několik minut",
    nothingChanged: "Nic se nezměnilo.",
    forbiddenTitle: "Toto není dovoleno",
    forbidden: "Tento odkaz takovou akci nedovoluje.",
    failedTitle: "Toto se nepodařilo",
    internalTitle: "Něco se u nás pokazilo",
    internal: "Pokud víme, tato chyba nic nezměnila. Zkuste to prosím za několik minut.",
    refusedTitle: "Formulář nebylo možné přijmout",
    refusedToken:
      "Bezpečnostní kontrola formuláře chybí nebo je zastaralá (uchovává se v cookie tohoto webu). Vraťte se, obnovte stránku a pošlete formulář znovu; pokud se to opakuje, povolte pro tento web cookies.",
    refusedSite:
      "Formulář byl odeslán z jiného webu. Otevřete odkaz ze svého e-mailu a pošlete formulář odtamtud.",
    unreadableTitle: "Formulář nebylo možné přečíst",
    unreadable: "Pošlete formulář přímo ze stránky.",
    tooLargeTitle: "Formulář je příliš velký",
    tooLarge: (kb: number) => `Formulář pro tyto stránky může mít nejvýše ${kb} kB.`,
    methodTitle: "Tuto stránku takto nelze použít",
    method: "Otevřete odkaz v prohlížeči a použijte tlačítko na stránce.",
    manageGoneTitle: "Tato poptávka skončila",
    manageGone: "Byla zrušena nebo jí vypršela platnost a její odkaz ji už nezobrazí.",
    notificationsGoneTitle: "Tato upozornění skončila",
    notificationsGone:
      "Pokud asistent stále chce dostávat upozornění, musí o ně požádat znovu; pak dostanete nový e-mail.",
    noMailTitle: "Takový e-mail tu není",
    noMail: "Možná byl smazán. Vraťte se do schránky a vyberte jiný.",
  },
  notifications: {
    promise:
      "Asistent se dozví jen to, že přišly nové nabídky nebo se změnil stav poptávky, nikdy ne které nabídky; ty si přečte sám svým vlastním kódem.",
    relayedThrough: ", přes zprostředkovatele ",
    choicesLegend: "Upozornění pro asistenta (nepovinné)",
    leaveEmpty: "Pokud nesouhlasíte, nechte políčko prázdné.",
    alsoNotify: { before: "Upozorňovat také ", after: ", když přijdou nové nabídky nebo se změní stav." },
    status: {
      awaiting_verification: "čeká se, až adresa asistenta odpoví na naši kontrolu",
      awaiting_person_approval: "čeká se na vaše povolení",
      active: "povoleno",
      ended: "zastaveno",
    },
    ended: {
      "approval-withdrawn": "zastavili jste je vy",
      unsubscribed: "zastavil je asistent",
      "delivery-failed": "adresa asistenta přestala odpovídat",
      gone: "adresa asistenta oznámila, že už neexistuje",
      "lease-expired": "asistent je neobnovil",
      "verification-failed": "adresa asistenta neodpověděla na naši kontrolu",
      "intent-withdrawn": "poptávka byla zrušena",
      "intent-expired": "poptávka skončila",
    },
    receiptsTitle: "Asistenti, které upozorňujeme na tuto poptávku",
    notYet: "Zatím bez upozornění.",
    lastNotified: "Naposledy upozorněn ",
    listening: "Stále naslouchá.",
    notListening: "Momentálně nenaslouchá.",
    disabled: {
      before: "Jeho adresa příliš dlouho nepřijala ani jedno upozornění, proto jsme mu je vypnuli ",
      after: ". Asistent si je může vyžádat znovu.",
    },
    allow: "Povolit tato upozornění",
    stop: "Zastavit tato upozornění",
    approvalTitle: "Upozornění pro asistenta",
    allowed: "Hotovo: upozornění jsou povolena.",
    stopped: "Hotovo: upozornění jsou zastavena.",
    asked: {
      before: (holder: string) => `Asistent požádal službu ${holder}, aby upozorňovala adresu `,
      after: " na tuto poptávku:",
    },
    whoTitle: "Kdo dostane upozornění",
    whoExplain: "Když se něco změní, pošleme upozornění na tuto adresu; patří asistentovi, ne nám.",
    learnsTitle: "Co se asistent dozví",
    learns: [
      "že k této poptávce přišly nové nabídky nebo se změnil její stav;",
      "nikdy ne které nabídky, nikdy vaši e-mailovou adresu, nikdy váš skrytý limit.",
    ],
    learnsAfter: "Nabídky si přečte sám svým vlastním kódem, jak to může už teď.",
    statusPrefix: "Stav:",
    nothingUntil:
      "Dokud to nepovolíte, nic se neposílá, a kdykoli to můžete zastavit na stránce správy poptávky.",
  },
  assistants: {
    title: "Asistenti, do kterých jste se přihlásili",
    scopes: {
      "intents:read": "číst vaše poptávky a jejich nabídky",
      "intents:manage": "zveřejňovat, měnit a rušit vaše poptávky",
    },
    signsInAt: (hosts: string) => ` (přihlašuje se na ${hosts}) smí `,
    and: " a ",
    revoke: "Odebrat tomuto asistentovi přístup",
  },
  signin: {
    title: "Přihlášení",
    heading: "Přihlaste se, aby asistent mohl jednat za vás",
    lead: (client: string, holder: string) => ({
      before: "Asistent ",
      client,
      after: ` žádá, aby mohl za vás jednat ve službě ${holder}. Zadejte svou e-mailovou adresu: pošleme vám odkaz k přihlášení. Dokud to neschválíte, asistent nedostane nic.`,
    }),
    email: "Vaše e-mailová adresa",
    emailHint: "Na tuto adresu pošleme jednorázový odkaz k přihlášení. Asistent ji nikdy neuvidí.",
    send: "Pošlete mi odkaz k přihlášení",
    linkLead: "Stisknutím tlačítka se přihlásíte adresou, na kterou přišel tento odkaz.",
    button: "Přihlásit se",
    unknownTitle: "Neznámé přihlášení",
    unknown: "Tento odkaz k přihlášení zde neznáme.",
    unknownLinkTitle: "Neznámý odkaz",
    endedTitle: "Toto přihlášení skončilo",
    ended:
      "Odkaz otevřete do 10 minut ve stejném prohlížeči, ve kterém jste začali. Jinak se vraťte k asistentovi a začněte znovu.",
    notFormTitle: "Toto není formulář",
    notForm: "Formulář odešlete ze stránky.",
    refusedTitle: "Odmítnuto",
    refused:
      "Tento formulář nepřišel z této stránky. Načtěte ji znovu a zkuste to ještě jednou (soubory cookie musí být povolené).",
    tooLargeTitle: "Příliš velký formulář",
    tooLarge: "Formulář byl větší, než tato stránka přijme.",
    sentTitle: "Zkontrolujte si e-mail",
    sent: "Poslali jsme vám odkaz k přihlášení. Otevřete ho do 15 minut v tomto prohlížeči.",
    linkGoneTitle: "Tento odkaz už nefunguje",
    linkGone: "Odkaz k přihlášení můžete použít jednou, do 15 minut. Požádejte o nový.",
    signInFirstTitle: "Nejprve se přihlaste",
    signInFirst: "Přihlaste se dřív, než asistentovi něco povolíte.",
    consentChangedTitle: "Text souhlasu se změnil",
    consentChanged: "Načtěte stránku znovu a přečtěte si nový text.",
  },
  unsubscribe: {
    unknownTitle: "Neznámý odkaz",
    unknown: "Tento odkaz zde neznáme.",
    title: "Zastavit upozornění",
    explain:
      "Tímto zastavíte všechna upozornění, která asistent dostává o této poptávce. Poptávka zůstává; zrušit ji můžete na stránce její správy.",
    button: "Zastavit upozornění",
    tooLargeTitle: "Příliš velký požadavek",
    notOneClickTitle: "Toto není požadavek jedním kliknutím",
    notOneClick: (field: string) => `Pošlete ${field}.`,
    stoppedTitle: "Upozornění jsou zastavena",
    stopped:
      "O této poptávce už nedostává upozornění žádný asistent. Poptávka zůstává; zrušit ji můžete na stránce její správy.",
  },
  oauthError: {
    title: "Přihlášení se zastavilo",
    reasons: {
      invalid_request: "Žádost asistenta o přihlášení není platná.",
      invalid_client: "Asistenta, který vás chce přihlásit, zde neznáme.",
      invalid_redirect_uri: "Návratová adresa asistenta není žádná z těch, které si zaregistroval.",
      invalid_scope: "Asistent žádal o přístup, který tato služba nenabízí.",
      invalid_target: "Asistent žádal o přístup k něčemu, co tato služba neposkytuje.",
      unsupported_response_type: "Takovou žádost asistenta o přihlášení tato služba nepodporuje.",
      access_denied: "Přístup nebyl udělen.",
      server_error: "Něco se u nás pokazilo.",
    },
    otherReason: "V přihlášení nešlo pokračovat.",
    forDeveloper:
      "Vraťte se k asistentovi a začněte znovu. Pokud se to stane znovu, vývojář asistenta si může přečíst toto: ",
  },
  approve: {
    title: "Povolení pro asistenta",
    heading: (client: string) => `Povolit asistentovi ${client} jednat za vás?`,
    asks: {
      before: "Asistent ",
      after:
        " žádá, aby mohl jednat za vás v této službě. Než odpovíte, podívejte se, co se dozví a odkud pracuje.",
    },
    hostTitle: "Odkud pracuje",
    hostExplain: (host: string) =>
      `Po vaší odpovědi se prohlížeč vrátí na ${host} a tam asistent dostane přístup.`,
    scopes: {
      "intents:read": "číst poptávky, které za vás zveřejnil, a nabídky, které k nim přišly",
      "intents:manage": "zveřejňovat za vás poptávky (posílané na vaši e-mailovou adresu), měnit je a rušit",
    },
    learnsTitle: "Co se dozví a co bude moci dělat",
    neverLearns: "Nikdy se nedozví vaši e-mailovou adresu ani hodnotu skrytého limitu.",
    agreeTitle: "S čím souhlasíte u poptávek, které zveřejní",
    version: (version: string) =>
      `Verze textu souhlasu ${version}. Přístup tohoto asistenta můžete zastavit přes odkaz na správu poptávky v kterémkoli našem e-mailu.`,
    allow: "Povolit",
    deny: "Nepovolit",
  },
  check: {
    title: "Ověřit záznam o dohodě",
    lead: "Záznam o tom, na čem se dohodli dva agenti, může ověřit kdokoli, bez účtu kdekoli: podmínky, zprávy, ze kterých pocházejí, a podpisy obou stran.",
    verdicts: {
      two_signatures: "Ověřeno, dva podpisy",
      one_signature: "Ověřeno, jeden podpis",
      their_reply: "Jejich odpověď, zaznamenaná jmenovanou stranou",
      does_not_check_out: "Ověření neprošlo",
      could_not_check: "Nepodařilo se ověřit",
    } as Record<string, string>,
    keysAsSupplied: (verdict: string) => `${verdict} (klíče tak, jak byly dodány)`,
    trustsNone:
      "Tento držitel nedůvěřuje žádnému hostiteli stránek s klíči: záznam se zde ověří jen vůči stránkám s klíči, které zadáte níže a kterým se důvěřuje tak, jak jsou.",
    trustsOrigins: (origins: string) =>
      `Tento držitel načítá stránky s klíči z ${origins} (nastavil je jeho provozovatel); pokud níže zadáte stránky s klíči, použijí se místo nich.`,
    recordLabel: "Záznam (JSON)",
    recordHint: "Vložte záznam o dohodě, který vám dal agent, nebo níže vyberte jeho soubor. Nejvýše 256 KB.",
    fileLabel: "Nebo soubor se záznamem",
    keyPagesLabel: "Stránky s klíči (JSON)",
    keyPagesHint:
      "Stránky s klíči podepisujících: jedna stránka, více stránek za sebou nebo pole stránek v JSON.",
    keyPageFilesLabel: "Nebo soubory se stránkami s klíči",
    submit: "Ověřit tento záznam",
    signed: {
      offer: (party: string, kid: string, by: string) =>
        `Nabídku podepsala strana ${party} (klíč ${kid}…, ručí za něj ${by}).`,
      acceptance: (party: string, kid: string, by: string) =>
        `Přijetí podepsala strana ${party} (klíč ${kid}…, ručí za něj ${by}).`,
      seal: (party: string, kid: string, by: string) =>
        `Pečeť podepsala strana ${party} (klíč ${kid}…, ručí za něj ${by}).`,
    },
    vouchers: {
      dns: "DNS záznam její domény",
      address: "její uvedená adresa",
      domain: "její uvedená doména",
    } as Record<string, string>,
    keysSupplied:
      "Stránky s klíči jsou ty, které přišly se záznamem: neručí za ně žádný důvěryhodný hostitel, takže toto ukazuje jen to, že jim záznam odpovídá. Pro jistotu si stránku s klíči každého podepisujícího stáhněte z jeho vlastního hostitele.",
    failedAt: (step: number, what: string) =>
      `Selhalo to v kroku ${step} z 5, ${what}. Slovy ověřovače (v angličtině):`,
    steps: {
      1: "při čtení záznamu a jeho otisků",
      2: "u podmínek",
      3: "při propojení zpráv se záznamem",
      4: "při hledání klíčů podepisujících",
      5: "u podpisů",
    } as Record<number, string>,
    problems: {
      fileTooLarge: "Soubor je větší než 256 KB, což je nejvíc, kolik může mít záznam.",
      recordTooLarge: "Záznam je větší než 256 KB, což je nejvíc, kolik může mít.",
      noRecord: "Vložte záznam nebo vyberte jeho soubor.",
      keyPagesNotJson: "Stránky s klíči nejsou JSON: vložte každou stránku tak, jak jste ji dostali.",
      keyPageTooLarge: (name: string) => `Stránka s klíči ${name} je příliš velká.`,
      keyPageNotJson: (name: string) => `Stránka s klíči ${name} není JSON.`,
      tooManyKeyPages: (count: number) => `Zadejte nejvýše ${count} stránek s klíči.`,
      unreadable: "Formulář se nepodařilo přečíst; odešlete ho z této stránky.",
      keyPageInvalid: (reason: string) => `Stránka s klíči není platná (slovy ověřovače: ${reason}).`,
      noTrustedHost:
        "Tento držitel nedůvěřuje žádnému hostiteli stránek s klíči: zadejte stránky s klíči podepisujících tohoto záznamu.",
      notForm: "Otevřete tuto stránku v prohlížeči a použijte její tlačítko.",
    },
  },
  plain: {
    intro: "Držitel poptávek Isto Intents (vazba MCP 0.1, profil consent-link), provozovaný Doorbellem.",
    mcpEndpoint: "Koncový bod MCP (Streamable HTTP)",
    descriptor: "Popis držitele",
    mailbox: "Místní schránka (pro vývoj)",
    mailboxElsewhere: "na adrese v souhrnu, který držitel vypíše při startu",
    notFound: "Nenalezeno: na této adrese nic není.",
    busy: "Držitel je právě zaneprázdněný. Zkuste to za chvíli znovu.",
    failed: "Něco se u nás pokazilo. Zkuste to později.",
  },
};
