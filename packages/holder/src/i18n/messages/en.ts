/**
 * The pages' words in English: the reference catalogue. `Messages` is its shape, so a Slovak or
 * Czech catalogue that misses or misnames anything does not compile. Texts with a link inside are
 * split around the link (`before`, `link`, `after`) so the pages stay plain JSX.
 */
import { KEYS_AS_SUPPLIED, RESULT_TITLES } from "@doorbell/agreements";
import type { LimitHint } from "../../limits/limit-hints.js";
import type { PluralForms } from "../format.js";

export const en = {
  layout: {
    skip: "Skip to content",
    footer: (holder: string) =>
      `${holder} keeps requests that AI assistants publish for people who want to buy something, and e-mails them matching offers from its market. Your e-mail address is never given to sellers or assistants.`,
    languages: "Language",
  },
  duration: {
    minutes: { one: "# minute", other: "# minutes" } as PluralForms,
    hours: { one: "# hour", other: "# hours" } as PluralForms,
    days: { one: "# day", other: "# days" } as PluralForms,
  },
  facts: {
    request: "Request",
    what: "What",
    where: "Where",
    budget: "Budget",
    notGiven: "Not given",
    hiddenLimit: "Hidden limit",
    hiddenLimitSet: "A hidden limit is set. Its value is sealed: it is never shown, here or anywhere else.",
    none: "None",
    buyBy: "Buy by",
    validUntil: "Valid until",
    visibility: "Visibility",
  },
  status: {
    prefix: "Status:",
    awaiting_consent: {
      label: "Waiting for consent",
      explain: "Nobody has agreed to this request yet, so nothing is matched or sent.",
    },
    awaiting_email_confirmation: {
      label: "Waiting for e-mail confirmation",
      explain: "Open the confirmation link we e-mailed you to make this request active.",
    },
    active: {
      label: "Active",
      explain: "We match new offers against this request and e-mail you the ones that fit.",
    },
    expired: { label: "Expired", explain: "This request has ended. Nothing more is matched or sent." },
    withdrawn: { label: "Withdrawn", explain: "You withdrew this request. Nothing more is matched or sent." },
  },
  visibility: {
    private: "Private: only the holder's own catalogue is matched against it.",
    pseudonymous:
      "Pseudonymous: sellers may see the request under a pseudonym and answer it; they never see your e-mail.",
  },
  criteria: {
    vehicles: "Vehicles",
    property: "Property",
    madeIn: (year: number) => `Made in ${year} or later`,
    mileage: (km: string) => `At most ${km} km on the clock`,
    fuel: (fuel: string) => `Fuel: ${fuel}`,
    fuels: {
      petrol: "petrol",
      diesel: "diesel",
      hybrid: "hybrid",
      electric: "electric",
      lpg: "LPG",
    } as Record<string, string>,
    kind: (kind: string) => `Kind: ${kind}`,
    rooms: { one: "At least 1 room", other: "At least # rooms" } as PluralForms,
    area: (m2: string) => `At least ${m2} m²`,
  },
  consent: {
    title: "Agree to keep this request",
    errorTitle: "Error: agree to keep this request",
    problems: "Please check the form",
    lead: (holder: string) =>
      `An AI assistant asked ${holder} to keep this request for you and to e-mail you matching offers. Nothing happens until you agree below and confirm your e-mail address.`,
    linkWorksUntil: { before: "This link works once, until ", after: "." },
    theRequest: "The request",
    consentText: "Consent text",
    version: (version: string) => `Version ${version}`,
    /** Shown when the consent text has no translation into the page's language. */
    onlyInEnglish: "",
    email: "Your e-mail address",
    emailHint: "We send one link to this address to check that it is yours. Sellers never see it.",
    errorPrefix: "Error:",
    agree: (version: string) => `I agree to the consent text above (version ${version}).`,
    submit: "Agree and send the confirmation e-mail",
    errors: {
      version:
        "The consent text has changed since you opened this page. Please read it again and agree to it.",
      emailMissing: "Enter your e-mail address.",
      /** The service's own reason is English; other languages say this instead. */
      emailInvalid: "",
      consent: "Tick the box to agree to the consent text.",
    },
  },
  checkEmail: {
    title: "Check your e-mail",
    notice: "Thank you. We sent a confirmation link to the address you gave.",
    lead: (duration: string) =>
      `Open the link in that e-mail to make your request active. Until then nothing is matched or sent. The link works for ${duration}.`,
    everyMail:
      "Every e-mail we send has a link where you can see your request and its offers, or withdraw it.",
    mailbox: {
      before: "This server sends no real e-mail: read it in the ",
      link: "local mailbox",
      after: ".",
    },
  },
  confirm: {
    title: "Confirm your e-mail address",
    lead: "Press the button to confirm that this e-mail address is yours and to start your request.",
    button: "Confirm and start my request",
    why: "We ask for a press of the button because some e-mail programs open links by themselves; opening this page alone changes nothing.",
    usedTitle: "This e-mail address is already confirmed",
    used: "This confirmation link has been used: your request is active, and there is nothing more to press here.",
    usedManage:
      "To see its offers or withdraw it, open the manage link at the end of any e-mail we sent you.",
    goneTitle: "This confirmation link no longer works",
    gone: "It has already been used or it has expired.",
    goneNext:
      "If your request is active, every e-mail we sent you has a link to it. Otherwise ask your assistant to publish the request again.",
  },
  active: {
    title: "Your request is active",
    notice: "Your e-mail address is confirmed. We will e-mail you offers that match.",
    manageLink: {
      before: "",
      link: "See its offers or withdraw it",
      after: " at any time. The same link is in every e-mail we send you.",
    },
    everyMail: "Every e-mail we send you ends with a link where you can see its offers or withdraw it",
    mailbox: { before: " (this server keeps its mail in the ", link: "local mailbox", after: ")" },
  },
  manage: {
    title: "Your request",
    offers: (count: number) => `Offers sent to you (${count})`,
    noOffers: "No matching offer yet. We e-mail you as soon as one arrives.",
    sellerAnswer: "A seller's answer to your request.",
    sentTo: "Sent to you ",
    withdraw: "Withdraw",
    withdrawExplain: "Withdrawing stops matching and e-mails at once. It cannot be undone.",
    withdrawButton: "Withdraw this request",
    renew: "Renew",
    renewExplain:
      "Keep this request open longer: choose the new last day. Only you can do this, from this page.",
    renewLabel: "New last day",
    renewButton: "Renew this request",
    ended: "This request has ended; there is nothing to withdraw.",
  },
  withdrawn: {
    title: "Your request is withdrawn",
    notice: "Done. Nothing more is matched and we send you no more offers for it.",
    back: "Back to the request",
  },
  mailbox: {
    title: "Local mailbox",
    explain:
      "For development: this server has no SMTP server configured, so the mails it would send are kept here. Anyone who can open this page can read them.",
    empty: "No mail yet.",
    newestFirst: "Newest first",
    received: "Received",
    to: "To",
    subject: "Subject",
    back: "Back to the mailbox",
    message: "Message",
  },
  messages: {
    unknownTitle: "We do not know this link",
    unknown: [
      "Check that the whole link was opened: some e-mail programs break long links across lines.",
      "If you received it from an assistant, ask it for the link again.",
    ],
    usedTitle: "This link has already been used",
    used: [
      "Somebody has already agreed to keep this request with this link, and each link can be used only once: the first person to agree holds the request.",
      "If that was you, open the confirmation e-mail we sent you. If it was not, ask your assistant to publish the request again and open the new link.",
    ],
    expiredTitle: "This link has expired",
    expired: [
      "A request that nobody agrees to within a day is deleted, and so is its link.",
      "Ask your assistant to publish the request again and open the new link.",
    ],
    rateLimitedTitle: "Too many requests",
    rateLimited: "Please wait a minute and try again.",
    mailLimitedTitle: "Please wait",
    mailLimited: (wait: string) =>
      `Too many e-mails were asked for just now. To protect the people they would go to, no more are sent for a while: try again in ${wait}.`,
    limitHint: (limit: LimitHint) =>
      `For the holder's operator: the limit ${limit.name} (${limit.points} per ${limit.durationSeconds} s) was reached; ${limit.flag} (or ${limit.variable}) changes it.`,
    unavailableTitle: "Please try again in a few minutes",
    nothingChanged: "Nothing was changed.",
    forbiddenTitle: "This is not allowed",
    forbidden: "This link does not allow that action.",
    failedTitle: "This could not be done",
    internalTitle: "Something went wrong on our side",
    internal: "Nothing was changed by this error as far as we know. Please try again in a few minutes.",
    refusedTitle: "This form could not be accepted",
    refusedToken:
      "The form's security check is missing or out of date (it is kept in a cookie for this site). Go back, reload the page and send the form again; if this keeps happening, allow cookies for this site.",
    refusedSite:
      "The form was sent from another site. Open the link from your e-mail and send the form from there.",
    unreadableTitle: "This form could not be read",
    unreadable: "Send the form from the page itself.",
    tooLargeTitle: "This form is too large",
    tooLarge: (kb: number) => `A form sent to these pages is at most ${kb} KB.`,
    methodTitle: "This page cannot be used like that",
    method: "Open the link in a browser and use the page's own button.",
    manageGoneTitle: "This request has ended",
    manageGone: "It has been withdrawn or has expired, and its link no longer shows it.",
    notificationsGoneTitle: "These notifications have ended",
    notificationsGone:
      "The assistant has to ask again if it still wants to be notified; you will get a new e-mail then.",
    noMailTitle: "No such mail",
    noMail: "It may have been deleted. Go back to the mailbox and pick another one.",
  },
  notifications: {
    promise:
      "The assistant learns only that there are new offers or that the intent's status changed, never which offers; it reads them itself with its own code.",
    relayedThrough: ", relayed through ",
    choicesLegend: "Notifications for the assistant (optional)",
    leaveEmpty: "Leave a box empty to say no.",
    alsoNotify: { before: "Also notify ", after: " when there are new offers or the status changes." },
    status: {
      awaiting_verification: "waiting for the assistant's endpoint to answer our check",
      awaiting_person_approval: "waiting for you to allow it",
      active: "allowed",
      ended: "stopped",
    } as Record<string, string>,
    ended: {
      "approval-withdrawn": "you stopped it",
      unsubscribed: "the assistant stopped it",
      "delivery-failed": "the assistant's endpoint stopped answering",
      gone: "the assistant's endpoint said it is gone",
      "lease-expired": "the assistant did not renew it",
      "verification-failed": "the assistant's endpoint did not answer our check",
      "intent-withdrawn": "the request was withdrawn",
      "intent-expired": "the request ended",
    } as Record<string, string>,
    receiptsTitle: "Assistants notified about this request",
    notYet: "Not notified yet.",
    lastNotified: "Last notified ",
    listening: "Still listening.",
    notListening: "Not listening at the moment.",
    disabled: {
      before: "Its endpoint failed every attempt for too long, so we switched its notifications off on ",
      after: ". The assistant can ask for them again.",
    },
    allow: "Allow these notifications",
    stop: "Stop these notifications",
    approvalTitle: "Notifications for an assistant",
    allowed: "Done: notifications are allowed.",
    stopped: "Done: notifications are stopped.",
    asked: {
      before: (holder: string) => `An assistant asked ${holder} to notify `,
      after: " about this request:",
    },
    whoTitle: "Who is notified",
    whoExplain: "We notify this address when something changes; it belongs to the assistant, not to us.",
    learnsTitle: "What the assistant learns",
    learns: [
      "that there are new offers for this request, or that its status changed;",
      "never which offers, never your e-mail address, never your hidden limit.",
    ],
    learnsAfter: "It reads the offers itself with its own code, as it already can.",
    statusPrefix: "Status:",
    nothingUntil: "Nothing is sent until you allow it, and you can stop it at any time from the manage page.",
  },
  assistants: {
    title: "Assistants you signed in to",
    scopes: {
      "intents:read": "read your requests and their offers",
      "intents:manage": "publish, change and withdraw your requests",
    } as Record<string, string>,
    signsInAt: (hosts: string) => ` (signs in at ${hosts}) may `,
    and: " and ",
    revoke: "Revoke this assistant's access",
  },
  signin: {
    title: "Sign in",
    heading: "Sign in to let an assistant act for you",
    lead: (client: string, holder: string) => ({
      before: "The assistant ",
      client,
      after: ` asks to act for you at ${holder}. Enter your e-mail address: we send you a link to sign in. Nothing is given to the assistant before you approve.`,
    }),
    email: "Your e-mail address",
    emailHint: "We send a one-time sign-in link to this address. The assistant never sees it.",
    send: "Send me a sign-in link",
    linkLead: "Press the button to sign in with the address this link was sent to.",
    button: "Sign in",
    unknownTitle: "Unknown sign-in",
    unknown: "This sign-in link is not known here.",
    unknownLinkTitle: "Unknown link",
    endedTitle: "This sign-in has ended",
    ended:
      "Open the link in the same browser where you started, within 10 minutes. Otherwise go back to your assistant and start again.",
    notFormTitle: "Not a form",
    notForm: "Send the form from the page.",
    refusedTitle: "Refused",
    refused: "This form did not come from this page. Reload it and try again (cookies must be allowed).",
    tooLargeTitle: "Too large",
    tooLarge: "The form was larger than this page accepts.",
    sentTitle: "Check your e-mail",
    sent: "We sent you a link to sign in. Open it in this browser within 15 minutes.",
    linkGoneTitle: "This link no longer works",
    linkGone: "A sign-in link works once, for 15 minutes. Ask for a new one.",
    signInFirstTitle: "Sign in first",
    signInFirst: "Sign in before you allow an assistant.",
    consentChangedTitle: "The consent text changed",
    consentChanged: "Reload the page and read the new text.",
  },
  /** The page of the one-click link in every mail about an intent (List-Unsubscribe). */
  unsubscribe: {
    unknownTitle: "Unknown link",
    unknown: "This link is not known here.",
    title: "Stop the notifications",
    explain:
      "This stops every notification an assistant gets about this intent. The intent stays; you can withdraw it from its manage page.",
    button: "Stop the notifications",
    tooLargeTitle: "Too large",
    notOneClickTitle: "Not a one-click request",
    notOneClick: (field: string) => `Send ${field}.`,
    stoppedTitle: "Notifications stopped",
    stopped:
      "No assistant is notified about this intent any more. The intent stays; you can withdraw it from its manage page.",
  },
  /** The authorization server's error page; `reasons` by OAuth error code. */
  oauthError: {
    title: "Sign-in stopped",
    reasons: {
      invalid_request: "The assistant's sign-in request is not valid.",
      invalid_client: "The assistant asking to sign you in is not known here.",
      invalid_redirect_uri: "The assistant's return address is not one it registered.",
      invalid_scope: "The assistant asked for access this holder does not offer.",
      invalid_target: "The assistant asked for access to something this holder does not serve.",
      unsupported_response_type: "The assistant's sign-in request is not supported.",
      access_denied: "Access was not given.",
      server_error: "Something went wrong on our side.",
    },
    otherReason: "The sign-in could not go on.",
    forDeveloper:
      "Go back to your assistant and start again. If it happens again, the assistant's developer can read this: ",
  },
  approve: {
    title: "Allow an assistant",
    heading: (client: string) => `Allow ${client} to act for you?`,
    asks: {
      before: "The assistant ",
      after:
        " asks to act for you here. Before you answer, this is what it will learn and where it works from.",
    },
    hostTitle: "Where it works from",
    hostExplain: (host: string) =>
      `After you answer, your browser is sent back to ${host}, and the assistant receives its access there.`,
    scopes: {
      "intents:read": "read the requests it published for you and the offers delivered for them",
      "intents:manage":
        "publish requests for you (sent to your e-mail address), change them and withdraw them",
    } as Record<string, string>,
    learnsTitle: "What it will learn and be able to do",
    neverLearns: "It never learns your e-mail address, and never the value of a hidden limit.",
    agreeTitle: "What you agree to for the requests it publishes",
    version: (version: string) =>
      `Consent text version ${version}. You can stop this assistant's access from the manage link in any e-mail we send you.`,
    allow: "Allow",
    deny: "Do not allow",
  },
  check: {
    title: "Check an agreement record",
    lead: "A record of what two agents agreed can be checked by anyone, without an account anywhere: the terms, the messages they come from and the signatures of both sides.",
    /** The checker's own verdict titles, the ones its command line prints. */
    verdicts: { ...RESULT_TITLES } as Record<string, string>,
    /** Said after a verdict whose key pages no trusted host vouched for. */
    keysAsSupplied: (verdict: string) => `${verdict} (${KEYS_AS_SUPPLIED})`,
    trustsNone:
      "This holder trusts no key page host: a record checks out here only against the key pages you give below, which are trusted as given.",
    trustsOrigins: (origins: string) =>
      `This holder fetches key pages from ${origins} (set by its operator); key pages you give below are used instead when you give them.`,
    recordLabel: "The record (JSON)",
    recordHint: "Paste the agreement record an agent gave you, or choose its file below. At most 256 KB.",
    fileLabel: "Or a record file",
    keyPagesLabel: "Key pages (JSON)",
    keyPagesHint: "The signers' key pages: one page, several one after another, or a JSON array of pages.",
    keyPageFilesLabel: "Or key page files",
    submit: "Check this record",
    /** One signature: who signed the offer, the acceptance or the seal, with which key, vouched for how. */
    signed: {
      offer: (party: string, kid: string, by: string) =>
        `The offer is signed by ${party} (key ${kid}…, vouched for by ${by}).`,
      acceptance: (party: string, kid: string, by: string) =>
        `The acceptance is signed by ${party} (key ${kid}…, vouched for by ${by}).`,
      seal: (party: string, kid: string, by: string) =>
        `The seal is signed by ${party} (key ${kid}…, vouched for by ${by}).`,
    },
    vouchers: {
      dns: "its domain's DNS record",
      address: "its listed address",
      domain: "its listed domain",
    } as Record<string, string>,
    keysSupplied:
      "The key pages are the ones given with the record: no trusted host vouched for them, so this shows only that the record matches them. Get each signer's key page from its own host to be sure.",
    /** Where a record that does not check out failed: the checker's own words follow, in English. */
    failedAt: (step: number, what: string) =>
      `It failed at step ${step} of 5, ${what}. In the checker's words:`,
    steps: {
      1: "reading the record and its hashes",
      2: "the terms",
      3: "binding the messages to the record",
      4: "finding the signers' keys",
      5: "the signatures",
    } as Record<number, string>,
    problems: {
      fileTooLarge: "The file is larger than 256 KB, the most a record may be.",
      recordTooLarge: "The record is larger than 256 KB, the most a record may be.",
      noRecord: "Paste a record or choose its file.",
      keyPagesNotJson: "The key pages are not JSON: paste each page as it was given.",
      keyPageTooLarge: (name: string) => `The key page ${name} is too large.`,
      keyPageNotJson: (name: string) => `The key page ${name} is not JSON.`,
      tooManyKeyPages: (count: number) => `Give at most ${count} key pages.`,
      unreadable: "The form could not be read; send it from this page.",
      keyPageInvalid: (reason: string) => `A key page is not valid: ${reason}.`,
      noTrustedHost: "This holder trusts no key page host: give the key pages of the record's signers.",
      notForm: "Open this page in a browser and use its button.",
    },
  },
  /** The holder's plain-text answers: the index, an unknown address, a failure. */
  plain: {
    intro: "An Isto Intents holder (MCP binding 0.1, consent-link profile), run by Doorbell.",
    mcpEndpoint: "MCP endpoint (Streamable HTTP)",
    descriptor: "Holder descriptor",
    mailbox: "Local mailbox (development)",
    mailboxElsewhere: "at the address in the holder's start-up summary",
    notFound: "Not found: nothing is at this address.",
    busy: "The holder is busy. Try again in a moment.",
    failed: "Something went wrong on our side. Try again later.",
  },
};

export type Messages = typeof en;
