/** The pages' words in Slovak (same shape as en.ts). */
import type { LimitHint } from "../../limits/limit-hints.js";
import type { PluralForms } from "../format.js";
import type { Messages } from "./en.js";

export const sk: Messages = {
  layout: {
    skip: "Preskočiť na obsah",
    footer: (holder: string) =>
      `${holder} uchováva dopyty, ktoré AI asistenti zverejňujú za ľudí, čo chcú niečo kúpiť, a posiela im e-mailom zodpovedajúce ponuky zo svojho trhu. Vaša e-mailová adresa sa nikdy nedostane k predajcom ani k asistentom.`,
    languages: "Jazyk",
  },
  duration: {
    minutes: { one: "# minútu", few: "# minúty", other: "# minút" } as PluralForms,
    hours: { one: "# hodinu", few: "# hodiny", other: "# hodín" } as PluralForms,
    days: { one: "# deň", few: "# dni", other: "# dní" } as PluralForms,
  },
  facts: {
    request: "Znenie",
    what: "Čo",
    where: "Kde",
    budget: "Rozpočet",
    notGiven: "Neuvedený",
    hiddenLimit: "Skrytý limit",
    hiddenLimitSet:
      "Skrytý limit je nastavený. Jeho hodnota je zapečatená: nikdy sa nezobrazí, ani tu, ani nikde inde.",
    none: "Žiadny",
    buyBy: "Kúpiť do",
    validUntil: "Platí do",
    visibility: "Viditeľnosť",
  },
  status: {
    prefix: "Stav:",
    awaiting_consent: {
      label: "Čaká na súhlas",
      explain: "S týmto dopytom zatiaľ nikto nesúhlasil, preto sa nič neporovnáva ani neposiela.",
    },
    awaiting_email_confirmation: {
      label: "Čaká na potvrdenie e-mailu",
      explain: "Otvorte potvrdzovací odkaz, ktorý sme vám poslali e-mailom, a dopyt sa aktivuje.",
    },
    active: {
      label: "Aktívny",
      explain: "Nové ponuky porovnávame s týmto dopytom a tie, ktoré sa hodia, vám pošleme e-mailom.",
    },
    expired: { label: "Vypršal", explain: "Tento dopyt sa skončil. Už sa nič neporovnáva ani neposiela." },
    withdrawn: { label: "Zrušený", explain: "Tento dopyt ste zrušili. Už sa nič neporovnáva ani neposiela." },
  },
  visibility: {
    private: "Súkromný: porovnáva sa len s vlastným katalógom tejto služby.",
    pseudonymous:
      "Pod pseudonymom: predajcovia môžu dopyt vidieť pod pseudonymom a odpovedať naň; váš e-mail nikdy neuvidia.",
  },
  criteria: {
    vehicles: "Vozidlá",
    property: "Nehnuteľnosti",
    madeIn: (year: number) => `Vyrobené v roku ${year} alebo neskôr`,
    mileage: (km: string) => `Najviac ${km} km najazdených`,
    fuel: (fuel: string) => `Palivo: ${fuel}`,
    fuels: { petrol: "benzín", diesel: "nafta", hybrid: "hybrid", electric: "elektrina", lpg: "LPG" },
    kind: (kind: string) => `Druh: ${kind}`,
    rooms: { one: "Aspoň 1 izba", few: "Aspoň # izby", other: "Aspoň # izieb" } as PluralForms,
    area: (m2: string) => `Aspoň ${m2} m²`,
  },
  consent: {
    title: "Súhlas s uchovaním dopytu",
    errorTitle: "Chyba: súhlas s uchovaním dopytu",
    problems: "Skontrolujte, prosím, formulár",
    lead: (holder: string) =>
      `AI asistent požiadal službu ${holder}, aby pre vás uchovávala tento dopyt a posielala vám e-mailom zodpovedajúce ponuky. Nič sa nestane, kým nižšie nesúhlasíte a nepotvrdíte svoju e-mailovú adresu.`,
    linkWorksUntil: { before: "Tento odkaz funguje raz, a to do ", after: "." },
    theRequest: "Dopyt",
    consentText: "Text súhlasu",
    version: (version: string) => `Verzia ${version}`,
    onlyInEnglish:
      "Prevádzkovateľ tejto služby zatiaľ nemá text súhlasu v slovenčine, preto je uvedený v angličtine. Súhlasíte s týmto anglickým textom.",
    email: "Vaša e-mailová adresa",
    emailHint:
      "Na túto adresu pošleme jeden odkaz, aby sme overili, že je vaša. Predajcovia ju nikdy neuvidia.",
    errorPrefix: "Chyba:",
    agree: (version: string) => `Súhlasím s textom súhlasu uvedeným vyššie (verzia ${version}).`,
    submit: "Súhlasiť a poslať potvrdzovací e-mail",
    errors: {
      version:
        "Text súhlasu sa zmenil, odkedy ste túto stránku otvorili. Prečítajte si ho, prosím, znova a vyjadrite súhlas.",
      emailMissing: "Zadajte svoju e-mailovú adresu.",
      emailInvalid: "Táto e-mailová adresa nie je platná. Zadajte adresu v tvare meno@example.sk.",
      consent: "Zaškrtnutím políčka vyjadrite súhlas s textom súhlasu.",
    },
  },
  checkEmail: {
    title: "Skontrolujte si e-mail",
    notice: "Ďakujeme. Na zadanú adresu sme poslali potvrdzovací odkaz.",
    lead: (duration: string) =>
      `Otvorte odkaz v tom e-maile a váš dopyt sa aktivuje. Dovtedy sa nič neporovnáva ani neposiela. Odkaz platí ${duration}.`,
    everyMail:
      "Každý náš e-mail obsahuje odkaz, kde si môžete pozrieť svoj dopyt a jeho ponuky alebo ho zrušiť.",
    mailbox: {
      before: "Tento server neposiela skutočné e-maily: prečítate si ich v ",
      link: "lokálnej schránke",
      after: ".",
    },
  },
  confirm: {
    title: "Potvrďte svoju e-mailovú adresu",
    lead: "Stlačením tlačidla potvrdíte, že táto e-mailová adresa je vaša, a spustíte svoj dopyt.",
    button: "Potvrdiť a spustiť môj dopyt",
    why: "Žiadame o stlačenie tlačidla, pretože niektoré e-mailové programy otvárajú odkazy samy; samotné otvorenie tejto stránky nič nezmení.",
    usedTitle: "Táto e-mailová adresa je už potvrdená",
    used: "Tento potvrdzovací odkaz už bol použitý: váš dopyt je aktívny a tu už nie je čo stlačiť.",
    usedManage:
      "Ak si chcete pozrieť jeho ponuky alebo ho zrušiť, otvorte odkaz na správu dopytu na konci ktoréhokoľvek nášho e-mailu.",
    goneTitle: "Tento potvrdzovací odkaz už nefunguje",
    gone: "Už bol použitý alebo mu uplynula platnosť.",
    goneNext:
      "Ak je váš dopyt aktívny, odkaz naň nájdete v každom e-maile, ktorý sme vám poslali. Inak požiadajte svojho asistenta, aby dopyt zverejnil znova.",
  },
  active: {
    title: "Váš dopyt je aktívny",
    notice: "Vaša e-mailová adresa je potvrdená. Zodpovedajúce ponuky vám pošleme e-mailom.",
    manageLink: {
      before: "",
      link: "Jeho ponuky si môžete pozrieť alebo ho zrušiť",
      after: " kedykoľvek. Rovnaký odkaz je v každom e-maile, ktorý vám pošleme.",
    },
    everyMail: "Každý náš e-mail končí odkazom, kde si môžete pozrieť ponuky k dopytu alebo ho zrušiť",
    mailbox: { before: " (tento server ukladá e-maily do ", link: "lokálnej schránky", after: ")" },
  },
  manage: {
    title: "Váš dopyt",
    offers: (count: number) => `Ponuky, ktoré sme vám poslali (${count})`,
    noOffers: "Zatiaľ žiadna zodpovedajúca ponuka. Keď nejaká príde, hneď vám ju pošleme e-mailom.",
    sellerAnswer: "Odpoveď predajcu na váš dopyt.",
    sentTo: "Poslané ",
    withdraw: "Zrušenie",
    withdrawExplain: "Zrušením sa porovnávanie aj e-maily okamžite zastavia. Nedá sa to vrátiť späť.",
    withdrawButton: "Zrušiť tento dopyt",
    renew: "Predĺžiť",
    renewExplain:
      "Nechajte dopyt otvorený dlhšie: zvoľte nový posledný deň. Môžete to urobiť len vy, na tejto stránke.",
    renewLabel: "Nový posledný deň",
    renewButton: "Predĺžiť tento dopyt",
    ended: "Tento dopyt sa skončil; nie je čo zrušiť.",
  },
  withdrawn: {
    title: "Váš dopyt je zrušený",
    notice: "Hotovo. Už sa nič neporovnáva a ďalšie ponuky k nemu vám neposielame.",
    back: "Späť na dopyt",
  },
  mailbox: {
    title: "Lokálna schránka",
    explain:
      "Na vývoj: tento server nemá nastavený SMTP server, preto sa e-maily, ktoré by poslal, ukladajú sem. Prečítať si ich môže ktokoľvek, kto otvorí túto stránku.",
    empty: "Zatiaľ žiadne e-maily.",
    newestFirst: "Najnovšie navrchu",
    received: "Prijaté",
    to: "Komu",
    subject: "Predmet",
    back: "Späť do schránky",
    message: "Správa",
  },
  messages: {
    unknownTitle: "Tento odkaz nepoznáme",
    unknown: [
      "Skontrolujte, či sa otvoril celý odkaz: niektoré e-mailové programy dlhé odkazy zalomia do viacerých riadkov.",
      "Ak ste ho dostali od asistenta, požiadajte ho o odkaz znova.",
    ],
    usedTitle: "Tento odkaz už bol použitý",
    used: [
      "Niekto už cez tento odkaz súhlasil s uchovaním dopytu a každý odkaz sa dá použiť len raz: dopyt patrí tomu, kto súhlasil prvý.",
      "Ak ste to boli vy, otvorte potvrdzovací e-mail, ktorý sme vám poslali. Ak nie, požiadajte svojho asistenta, aby dopyt zverejnil znova, a otvorte nový odkaz.",
    ],
    expiredTitle: "Platnosť tohto odkazu vypršala",
    expired: [
      "Dopyt, s ktorým nikto do jedného dňa nesúhlasí, sa vymaže, a s ním aj jeho odkaz.",
      "Požiadajte svojho asistenta, aby dopyt zverejnil znova, a otvorte nový odkaz.",
    ],
    rateLimitedTitle: "Príliš veľa žiadostí",
    rateLimited: "Počkajte, prosím, minútu a skúste to znova.",
    mailLimitedTitle: "Počkajte, prosím",
    mailLimited: (wait: string) =>
      `Práve bolo vyžiadaných príliš veľa e-mailov. Na ochranu ľudí, ktorým by prišli, chvíľu žiadne ďalšie neposielame: skúste to znova o ${wait}.`,
    limitHint: (limit: LimitHint) =>
      `Pre prevádzkovateľa: bol dosiahnutý limit ${limit.name} (${limit.points} za ${limit.durationSeconds} s); zmení ho ${limit.flag} (alebo ${limit.variable}).`,
    unavailableTitle: "Skúste to, prosím, o niekoľko minút",
    nothingChanged: "Nič sa nezmenilo.",
    forbiddenTitle: "Toto nie je dovolené",
    forbidden: "Tento odkaz takúto akciu nedovoľuje.",
    failedTitle: "Toto sa nepodarilo",
    internalTitle: "Niečo sa u nás pokazilo",
    internal: "Pokiaľ vieme, táto chyba nič nezmenila. Skúste to, prosím, o niekoľko minút.",
    refusedTitle: "Formulár sa nedal prijať",
    refusedToken:
      "Bezpečnostná kontrola formulára chýba alebo je zastaraná (uchováva sa v cookie tejto stránky). Vráťte sa, obnovte stránku a pošlite formulár znova; ak sa to opakuje, povoľte pre túto stránku cookies.",
    refusedSite:
      "Formulár bol odoslaný z inej stránky. Otvorte odkaz zo svojho e-mailu a pošlite formulár odtiaľ.",
    unreadableTitle: "Formulár sa nedal prečítať",
    unreadable: "Pošlite formulár priamo zo stránky.",
    tooLargeTitle: "Formulár je príliš veľký",
    tooLarge: (kb: number) => `Formulár pre tieto stránky môže mať najviac ${kb} kB.`,
    methodTitle: "Túto stránku takto nemožno použiť",
    method: "Otvorte odkaz v prehliadači a použite tlačidlo na stránke.",
    manageGoneTitle: "Tento dopyt sa skončil",
    manageGone: "Bol zrušený alebo mu uplynula platnosť a jeho odkaz ho už nezobrazí.",
    notificationsGoneTitle: "Tieto upozornenia sa skončili",
    notificationsGone:
      "Ak asistent ešte chce dostávať upozornenia, musí o ne požiadať znova; vtedy dostanete nový e-mail.",
    noMailTitle: "Takýto e-mail tu nie je",
    noMail: "Možno bol vymazaný. Vráťte sa do schránky a vyberte iný.",
  },
  notifications: {
    promise:
      "Asistent sa dozvie len to, že prišli nové ponuky alebo sa zmenil stav dopytu, nikdy nie ktoré ponuky; tie si prečíta sám so svojím vlastným kódom.",
    relayedThrough: ", cez sprostredkovateľa ",
    choicesLegend: "Upozornenia pre asistenta (nepovinné)",
    leaveEmpty: "Ak nesúhlasíte, nechajte políčko prázdne.",
    alsoNotify: { before: "Upozorňovať aj ", after: ", keď prídu nové ponuky alebo sa zmení stav." },
    status: {
      awaiting_verification: "čaká sa, kým adresa asistenta odpovie na našu kontrolu",
      awaiting_person_approval: "čaká sa na vaše povolenie",
      active: "povolené",
      ended: "zastavené",
    },
    ended: {
      "approval-withdrawn": "zastavili ste ich vy",
      unsubscribed: "zastavil ich asistent",
      "delivery-failed": "adresa asistenta prestala odpovedať",
      gone: "adresa asistenta oznámila, že už neexistuje",
      "lease-expired": "asistent ich neobnovil",
      "verification-failed": "adresa asistenta neodpovedala na našu kontrolu",
      "intent-withdrawn": "dopyt bol zrušený",
      "intent-expired": "dopyt sa skončil",
    },
    receiptsTitle: "Asistenti, ktorých upozorňujeme na tento dopyt",
    notYet: "Zatiaľ bez upozornenia.",
    lastNotified: "Naposledy upozornený ",
    listening: "Stále počúva.",
    notListening: "Momentálne nepočúva.",
    disabled: {
      before: "Jeho adresa príliš dlho neprijala ani jedno upozornenie, preto sme mu ich vypli ",
      after: ". Asistent si ich môže vyžiadať znova.",
    },
    allow: "Povoliť tieto upozornenia",
    stop: "Zastaviť tieto upozornenia",
    approvalTitle: "Upozornenia pre asistenta",
    allowed: "Hotovo: upozornenia sú povolené.",
    stopped: "Hotovo: upozornenia sú zastavené.",
    asked: {
      before: (holder: string) => `Asistent požiadal službu ${holder}, aby upozorňovala adresu `,
      after: " na tento dopyt:",
    },
    whoTitle: "Kto dostane upozornenie",
    whoExplain: "Keď sa niečo zmení, pošleme upozornenie na túto adresu; patrí asistentovi, nie nám.",
    learnsTitle: "Čo sa asistent dozvie",
    learns: [
      "že k tomuto dopytu prišli nové ponuky alebo sa zmenil jeho stav;",
      "nikdy nie ktoré ponuky, nikdy vašu e-mailovú adresu, nikdy váš skrytý limit.",
    ],
    learnsAfter: "Ponuky si prečíta sám so svojím vlastným kódom, ako to môže už teraz.",
    statusPrefix: "Stav:",
    nothingUntil:
      "Kým to nepovolíte, nič sa neposiela, a kedykoľvek to môžete zastaviť na stránke správy dopytu.",
  },
  assistants: {
    title: "Asistenti, do ktorých ste sa prihlásili",
    scopes: {
      "intents:read": "čítať vaše dopyty a ich ponuky",
      "intents:manage": "zverejňovať, meniť a rušiť vaše dopyty",
    },
    signsInAt: (hosts: string) => ` (prihlasuje sa na ${hosts}) môže `,
    and: " a ",
    revoke: "Odobrať tomuto asistentovi prístup",
  },
  signin: {
    title: "Prihlásenie",
    heading: "Prihláste sa, aby asistent mohol konať za vás",
    lead: (client: string, holder: string) => ({
      before: "Asistent ",
      client,
      after: ` žiada, aby mohol za vás konať v službe ${holder}. Zadajte svoju e-mailovú adresu: pošleme vám odkaz na prihlásenie. Kým to neschválite, asistent nedostane nič.`,
    }),
    email: "Vaša e-mailová adresa",
    emailHint: "Na túto adresu pošleme jednorazový odkaz na prihlásenie. Asistent ju nikdy neuvidí.",
    send: "Pošlite mi odkaz na prihlásenie",
    linkLead: "Stlačením tlačidla sa prihlásite adresou, na ktorú prišiel tento odkaz.",
    button: "Prihlásiť sa",
    unknownTitle: "Neznáme prihlásenie",
    unknown: "Tento odkaz na prihlásenie tu nepoznáme.",
    unknownLinkTitle: "Neznámy odkaz",
    endedTitle: "Toto prihlásenie sa skončilo",
    ended:
      "Odkaz otvorte do 10 minút v tom istom prehliadači, v ktorom ste začali. Inak sa vráťte k asistentovi a začnite znova.",
    notFormTitle: "Toto nie je formulár",
    notForm: "Formulár odošlite zo stránky.",
    refusedTitle: "Odmietnuté",
    refused:
      "Tento formulár neprišiel z tejto stránky. Načítajte ju znova a skúste to ešte raz (súbory cookie musia byť povolené).",
    tooLargeTitle: "Príliš veľký formulár",
    tooLarge: "Formulár bol väčší, ako táto stránka prijme.",
    sentTitle: "Skontrolujte si e-mail",
    sent: "Poslali sme vám odkaz na prihlásenie. Otvorte ho do 15 minút v tomto prehliadači.",
    linkGoneTitle: "Tento odkaz už nefunguje",
    linkGone: "Odkaz na prihlásenie môžete použiť raz, do 15 minút. Požiadajte o nový.",
    signInFirstTitle: "Najprv sa prihláste",
    signInFirst: "Prihláste sa skôr, ako asistentovi niečo povolíte.",
    consentChangedTitle: "Text súhlasu sa zmenil",
    consentChanged: "Načítajte stránku znova a prečítajte si nový text.",
  },
  unsubscribe: {
    unknownTitle: "Neznámy odkaz",
    unknown: "Tento odkaz tu nepoznáme.",
    title: "Zastaviť upozornenia",
    explain:
      "Týmto zastavíte všetky upozornenia, ktoré asistent dostáva o tomto dopyte. Dopyt zostáva; zrušiť ho môžete na stránke jeho správy.",
    button: "Zastaviť upozornenia",
    tooLargeTitle: "Príliš veľká žiadosť",
    notOneClickTitle: "Toto nie je žiadosť jedným kliknutím",
    notOneClick: (field: string) => `Pošlite ${field}.`,
    stoppedTitle: "Upozornenia sú zastavené",
    stopped:
      "O tomto dopyte už nedostáva upozornenia žiadny asistent. Dopyt zostáva; zrušiť ho môžete na stránke jeho správy.",
  },
  oauthError: {
    title: "Prihlásenie sa zastavilo",
    reasons: {
      invalid_request: "Žiadosť asistenta o prihlásenie nie je platná.",
      invalid_client: "Asistenta, ktorý vás chce prihlásiť, tu nepoznáme.",
      invalid_redirect_uri: "Návratová adresa asistenta nie je žiadna z tých, ktoré si zaregistroval.",
      invalid_scope: "Asistent žiadal prístup, ktorý táto služba neponúka.",
      invalid_target: "Asistent žiadal prístup k niečomu, čo táto služba neposkytuje.",
      unsupported_response_type: "Takúto žiadosť asistenta o prihlásenie táto služba nepodporuje.",
      access_denied: "Prístup nebol udelený.",
      server_error: "Niečo sa u nás pokazilo.",
    },
    otherReason: "V prihlásení sa nedalo pokračovať.",
    forDeveloper:
      "Vráťte sa k asistentovi a začnite znova. Ak sa to stane znova, vývojár asistenta si môže prečítať toto: ",
  },
  approve: {
    title: "Povolenie pre asistenta",
    heading: (client: string) => `Povoliť asistentovi ${client} konať za vás?`,
    asks: {
      before: "Asistent ",
      after:
        " žiada, aby mohol konať za vás v tejto službe. Predtým, ako odpoviete, si pozrite, čo sa dozvie a odkiaľ pracuje.",
    },
    hostTitle: "Odkiaľ pracuje",
    hostExplain: (host: string) =>
      `Po vašej odpovedi sa prehliadač vráti na ${host} a tam asistent dostane prístup.`,
    scopes: {
      "intents:read": "čítať dopyty, ktoré za vás zverejnil, a ponuky, ktoré k nim prišli",
      "intents:manage": "zverejňovať za vás dopyty (posielané na vašu e-mailovú adresu), meniť ich a rušiť",
    },
    learnsTitle: "Čo sa dozvie a čo bude môcť robiť",
    neverLearns: "Nikdy sa nedozvie vašu e-mailovú adresu ani hodnotu skrytého limitu.",
    agreeTitle: "S čím súhlasíte pri dopytoch, ktoré zverejní",
    version: (version: string) =>
      `Verzia textu súhlasu ${version}. Prístup tohto asistenta môžete zastaviť cez odkaz na správu dopytu v ktoromkoľvek našom e-maile.`,
    allow: "Povoliť",
    deny: "Nepovoliť",
  },
  check: {
    title: "Overiť záznam o dohode",
    lead: "Záznam o tom, na čom sa dohodli dvaja agenti, môže overiť ktokoľvek, bez účtu kdekoľvek: podmienky, správy, z ktorých pochádzajú, a podpisy oboch strán.",
    verdicts: {
      two_signatures: "Overené, dva podpisy",
      one_signature: "Overené, jeden podpis",
      their_reply: "Ich odpoveď, zaznamenaná menovanou stranou",
      does_not_check_out: "Overenie neprešlo",
      could_not_check: "Nepodarilo sa overiť",
    } as Record<string, string>,
    keysAsSupplied: (verdict: string) => `${verdict} (kľúče tak, ako boli dodané)`,
    trustsNone:
      "Tento držiteľ nedôveruje žiadnemu hostiteľovi stránok s kľúčmi: záznam sa tu overí len voči stránkam s kľúčmi, ktoré zadáte nižšie a ktorým sa dôveruje tak, ako sú.",
    trustsOrigins: (origins: string) =>
      `Tento držiteľ načítava stránky s kľúčmi z ${origins} (nastavil ich jeho prevádzkovateľ); ak nižšie zadáte stránky s kľúčmi, použijú sa namiesto nich.`,
    recordLabel: "Záznam (JSON)",
    recordHint:
      "Vložte záznam o dohode, ktorý vám dal agent, alebo nižšie vyberte jeho súbor. Najviac 256 KB.",
    fileLabel: "Alebo súbor so záznamom",
    keyPagesLabel: "Stránky s kľúčmi (JSON)",
    keyPagesHint:
      "Stránky s kľúčmi podpisujúcich: jedna stránka, viac stránok za sebou alebo pole stránok v JSON.",
    keyPageFilesLabel: "Alebo súbory so stránkami s kľúčmi",
    submit: "Overiť tento záznam",
    signed: {
      offer: (party: string, kid: string, by: string) =>
        `Ponuku podpísala strana ${party} (kľúč ${kid}…, ručí zaň ${by}).`,
      acceptance: (party: string, kid: string, by: string) =>
        `Prijatie podpísala strana ${party} (kľúč ${kid}…, ručí zaň ${by}).`,
      seal: (party: string, kid: string, by: string) =>
        `Pečať podpísala strana ${party} (kľúč ${kid}…, ručí zaň ${by}).`,
    },
    vouchers: {
      dns: "DNS záznam jej domény",
      address: "jej uvedená adresa",
      domain: "jej uvedená doména",
    } as Record<string, string>,
    keysSupplied:
      "Stránky s kľúčmi sú tie, ktoré prišli so záznamom: neručí za ne žiadny dôveryhodný hostiteľ, takže toto ukazuje len to, že im záznam zodpovedá. Pre istotu si stránku s kľúčmi každého podpisujúceho stiahnite z jeho vlastného hostiteľa.",
    failedAt: (step: number, what: string) =>
      `Zlyhalo to v kroku ${step} z 5, ${what}. Slovami overovača (v angličtine):`,
    steps: {
      1: "pri čítaní záznamu a jeho odtlačkov",
      2: "pri podmienkach",
      3: "pri prepojení správ so záznamom",
      4: "pri hľadaní kľúčov podpisujúcich",
      5: "pri podpisoch",
    } as Record<number, string>,
    problems: {
      fileTooLarge: "Súbor je väčší ako 256 KB, čo je najviac, koľko môže mať záznam.",
      recordTooLarge: "Záznam je väčší ako 256 KB, čo je najviac, koľko môže mať.",
      noRecord: "Vložte záznam alebo vyberte jeho súbor.",
      keyPagesNotJson: "Stránky s kľúčmi nie sú JSON: vložte každú stránku tak, ako ste ju dostali.",
      keyPageTooLarge: (name: string) => `Stránka s kľúčmi ${name} je príliš veľká.`,
      keyPageNotJson: (name: string) => `Stránka s kľúčmi ${name} nie je JSON.`,
      tooManyKeyPages: (count: number) => `Zadajte najviac ${count} stránok s kľúčmi.`,
      unreadable: "Formulár sa nepodarilo prečítať; odošlite ho z tejto stránky.",
      keyPageInvalid: (reason: string) => `Stránka s kľúčmi nie je platná (slovami overovača: ${reason}).`,
      noTrustedHost:
        "Tento držiteľ nedôveruje žiadnemu hostiteľovi stránok s kľúčmi: zadajte stránky s kľúčmi podpisujúcich tohto záznamu.",
      notForm: "Otvorte túto stránku v prehliadači a použite jej tlačidlo.",
    },
  },
  plain: {
    intro: "Držiteľ dopytov Isto Intents (väzba MCP 0.1, profil consent-link), prevádzkovaný Doorbellom.",
    mcpEndpoint: "Koncový bod MCP (Streamable HTTP)",
    descriptor: "Popis držiteľa",
    mailbox: "Miestna schránka (na vývoj)",
    mailboxElsewhere: "na adrese v súhrne, ktorý držiteľ vypíše pri štarte",
    notFound: "Nenájdené: na tejto adrese nič nie je.",
    busy: "Držiteľ je práve zaneprázdnený. Skúste to o chvíľu znova.",
    failed: "Niečo sa u nás pokazilo. Skúste to neskôr.",
  },
};
