/**
 * The operator page: endpoint health, the delivery chart, the recent failed attempts and the dead
 * letters with a replay button each. Plain server-rendered HTML (no script); wide tables scroll
 * in a focusable region so a keyboard can scroll them too.
 */
import type { Channel, DeliveryLogEntry } from "@doorbell/delivery";
import type { Child, FC } from "hono/jsx";
import { Layout } from "../html/layout.js";
import { When } from "../html/when.js";
import { formatNumber } from "../i18n/format.js";
import type { OperatorWords } from "../i18n/operator-words.js";
import type { Lang } from "../model/languages.js";
import { DeliveryChart } from "./delivery-chart.js";
import { OPERATOR_ROWS, type OperatorView } from "./operator-data.js";

/** The page's own styles, after the shared stylesheet (allowed by hash in its CSP). */
export const OPERATOR_STYLE = [
  ".wrap{max-width:76rem}",
  ".scroll{overflow-x:auto;margin:0 0 1rem}",
  "table.data{font-size:.9375rem}table.data th,table.data td{white-space:nowrap}",
  "table.data td.id{white-space:normal;overflow-wrap:anywhere;min-width:10rem}",
  "caption{text-align:left;padding:0 0 .35rem}",
  "td form{margin:0}td button{padding:.3rem .8rem;font-size:.9375rem}",
  ".charts{display:grid;gap:1.5rem;grid-template-columns:repeat(auto-fit,minmax(min(100%,30rem),1fr))}",
  "figure.chart{margin:0;padding:1rem;border:1px solid var(--border);border-radius:.5rem;background:var(--panel)}",
  "figure.chart h3{margin:0}",
  "svg.plot{display:block;width:100%;height:auto;margin:.5rem 0}",
  ".plot .grid{stroke:var(--border);stroke-width:1}",
  ".plot .tick{fill:var(--muted);font-size:15px;font-family:inherit}",
  ".plot .bar-ok{fill:var(--ok)}.plot .bar-fail{fill:var(--err)}",
  ".plot .time{fill:none;stroke:var(--accent);stroke-width:2}.plot .time-dot{fill:var(--accent)}",
  ".legend{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;margin:.25rem 0 0;padding:0;font-size:.9375rem}",
  ".swatch{display:inline-block;width:.9rem;height:.9rem;margin-right:.4rem;vertical-align:-.1rem;border-radius:.15rem}",
  ".swatch.ok{background:var(--ok)}.swatch.fail{background:var(--err)}",
  ".swatch.line{height:.25rem;vertical-align:.2rem;background:var(--accent)}",
  "details{margin:.5rem 0 0}summary{cursor:pointer;color:var(--accent);font-weight:600}",
  ".failing{color:var(--err);font-weight:600}",
].join("");

const CHANNELS: readonly Channel[] = ["push", "mcp", "mcp-standard", "operator"];

const Table: FC<{ label: string; caption: string; children?: Child }> = ({ label, caption, children }) => (
  // Focusable: a region that scrolls sideways must take the focus to be scrolled by keyboard.
  <section class="scroll" aria-label={label} tabindex={0}>
    <table class="data">
      <caption class="muted">{caption}</caption>
      {children}
    </table>
  </section>
);

const Maybe: FC<{ at: number | null; lang: Lang; none: string }> = ({ at, lang, none }) =>
  at === null ? <span class="muted">{none}</span> : <When value={at} lang={lang} />;

function statusOf(entry: DeliveryLogEntry, words: OperatorWords): string {
  const { disabledAt, disabledReason } = entry.health;
  if (disabledAt !== null) {
    const reason = disabledReason ?? "";
    return words.endpoints.disabled(words.endpoints.disabledReasons[reason] ?? reason);
  }
  if (entry.status === "active" && !entry.deliveryActive) return words.statuses.suspended;
  return words.statuses[entry.status];
}

const channelName = (channel: string, words: OperatorWords): string =>
  (CHANNELS as readonly string[]).includes(channel) ? words.channels[channel as Channel] : channel;

/** What every section gets: the page's words, language and data. */
interface SectionProps {
  lang: Lang;
  words: OperatorWords;
  view: OperatorView;
}

const hourFull = (at: number) => `${new Date(at).toISOString().slice(0, 16).replace("T", " ")} UTC`;

const EndpointsSection: FC<SectionProps> = ({ lang, words, view }) => {
  const n = (value: number) => formatNumber(value, lang);
  return (
    <>
      <h2 id="endpoints">{words.endpoints.heading}</h2>
      {view.endpoints.length === 0 ? (
        <p>{words.endpoints.none}</p>
      ) : (
        <Table label={words.endpoints.heading} caption={words.endpoints.caption(OPERATOR_ROWS.endpoints)}>
          <thead>
            <tr>
              <th scope="col">{words.endpoints.channel}</th>
              <th scope="col">{words.endpoints.subscriber}</th>
              <th scope="col">{words.endpoints.status}</th>
              <th scope="col">{words.endpoints.health}</th>
              <th scope="col">{words.endpoints.lastSuccess}</th>
              <th scope="col">{words.endpoints.lastError}</th>
              <th scope="col">{words.endpoints.failingSince}</th>
              <th scope="col">{words.endpoints.queued}</th>
              <th scope="col">{words.endpoints.deadLetters}</th>
            </tr>
          </thead>
          <tbody>
            {view.endpoints.map((entry) => (
              <tr>
                <td>{channelName(entry.channel, words)}</td>
                <td class="id">
                  <code>{entry.subscriberId}</code>
                </td>
                <td>{statusOf(entry, words)}</td>
                <td>
                  {words.endpoints.states[entry.health.state] ?? entry.health.state}:{" "}
                  {words.endpoints.healthFigures(entry.health.successes, entry.health.failures)}
                </td>
                <td>
                  <Maybe
                    at={entry.health.lastSuccessAt ?? entry.lastDeliveryAt}
                    lang={lang}
                    none={words.never}
                  />
                </td>
                <td>
                  {(entry.health.lastErrorCategory ?? entry.lastError) === null ? (
                    <span class="muted">{words.none}</span>
                  ) : (
                    <code class="failing">{entry.health.lastErrorCategory ?? entry.lastError}</code>
                  )}
                </td>
                <td>
                  <Maybe at={entry.health.failingSince ?? entry.failedSince} lang={lang} none={words.none} />
                </td>
                <td>{n(entry.queued)}</td>
                <td>{n(entry.deadLetters)}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </>
  );
};

const ChartSection: FC<SectionProps> = ({ lang, words, view }) => {
  const hour = (at: number) => new Date(at).toISOString().slice(11, 16);
  const day = (at: number) => {
    const date = new Date(at);
    return lang === "en"
      ? date.toISOString().slice(5, 10)
      : `${date.getUTCDate()}. ${date.getUTCMonth() + 1}.`;
  };
  const dayFull = (at: number) => new Date(at).toISOString().slice(0, 10);
  return (
    <>
      <h2 id="chart">{words.chart.heading}</h2>
      <div class="charts">
        <DeliveryChart
          id="chart-hours"
          title={words.chart.hours}
          bins={view.hours}
          label={hour}
          fullLabel={hourFull}
          labelEvery={6}
          words={words}
          lang={lang}
        />
        <DeliveryChart
          id="chart-days"
          title={words.chart.days}
          bins={view.days}
          label={day}
          fullLabel={dayFull}
          labelEvery={5}
          words={words}
          lang={lang}
        />
      </div>
    </>
  );
};

/** What a failed attempt and a dead letter both show first: when, where, what, how often, why. */
interface Failure {
  at: number;
  channel: string;
  subscriberId: string;
  type: string;
  count: number;
  category: string;
}

const FailureHeadings: FC<{ words: OperatorWords; count: string }> = ({ words, count }) => (
  <>
    <th scope="col">{words.recent.at}</th>
    <th scope="col">{words.endpoints.channel}</th>
    <th scope="col">{words.endpoints.subscriber}</th>
    <th scope="col">{words.recent.type}</th>
    <th scope="col">{count}</th>
    <th scope="col">{words.recent.category}</th>
  </>
);

const FailureCells: FC<{ failure: Failure; lang: Lang; words: OperatorWords }> = ({
  failure,
  lang,
  words,
}) => (
  <>
    <td>
      <When value={failure.at} lang={lang} />
    </td>
    <td>{channelName(failure.channel, words)}</td>
    <td class="id">
      <code>{failure.subscriberId}</code>
    </td>
    <td>
      <code>{failure.type}</code>
    </td>
    <td>{formatNumber(failure.count, lang)}</td>
    <td>
      <code class="failing">{failure.category}</code>
    </td>
  </>
);

const RecentSection: FC<SectionProps> = ({ lang, words, view }) => {
  return (
    <>
      <h2 id="recent">{words.recent.heading}</h2>
      {view.attempts.length === 0 ? (
        <p>{words.recent.none}</p>
      ) : (
        <Table label={words.recent.heading} caption={words.recent.caption}>
          <thead>
            <tr>
              <FailureHeadings words={words} count={words.recent.attempt} />
              <th scope="col">{words.recent.httpStatus}</th>
            </tr>
          </thead>
          <tbody>
            {view.attempts.map((attempt) => (
              <tr>
                <FailureCells failure={{ ...attempt, count: attempt.attempt }} lang={lang} words={words} />
                <td>
                  {attempt.httpStatus === null ? <span class="muted">{words.none}</span> : attempt.httpStatus}
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </>
  );
};

const DeadLettersSection: FC<SectionProps & { csrf: string }> = ({ lang, words, view, csrf }) => {
  return (
    <>
      <h2 id="dead-letters">{words.dead.heading}</h2>
      {view.deadLetters.length === 0 ? (
        <p>{words.dead.none}</p>
      ) : (
        <Table label={words.dead.heading} caption={words.dead.caption}>
          <thead>
            <tr>
              <FailureHeadings words={words} count={words.dead.attempts} />
              <th scope="col">{words.dead.reason}</th>
              <th scope="col">{words.dead.action}</th>
            </tr>
          </thead>
          <tbody>
            {view.deadLetters.map((dead) => (
              <tr>
                <FailureCells
                  failure={{ ...dead, at: dead.lastAttemptAt, count: dead.attempts }}
                  lang={lang}
                  words={words}
                />
                <td>{words.dead.reasons[dead.reason] ?? dead.reason}</td>
                <td>
                  {dead.subscriptionEnded ? (
                    <span class="muted">{words.dead.ended}</span>
                  ) : (
                    <form method="post" action={`/operator/dead-letters/${dead.id}/replay`}>
                      <input type="hidden" name="csrf" value={csrf} />
                      <button type="submit" aria-label={words.dead.replayLabel(dead.type, dead.subscriberId)}>
                        {words.dead.replay}
                      </button>
                    </form>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </>
  );
};

export const OperatorPage: FC<{
  holderName: string;
  lang: Lang;
  words: OperatorWords;
  view: OperatorView;
  /** The form token for the replay buttons. */
  csrf: string;
  notice?: { ok: boolean; text: string } | undefined;
}> = ({ holderName, lang, words, view, csrf, notice }) => (
  <Layout
    title={words.title}
    holderName={holderName}
    lang={lang}
    langSwitch={true}
    pageStyle={OPERATOR_STYLE}
  >
    <h1>{words.title}</h1>
    {notice !== undefined && (
      <div class={notice.ok ? "notice" : "alert"} role="status">
        <p>{notice.text}</p>
      </div>
    )}
    <p class="lead">{words.lead}</p>
    <p class="muted">{words.updated(hourFull(view.now))}</p>
    <EndpointsSection lang={lang} words={words} view={view} />
    <ChartSection lang={lang} words={words} view={view} />
    <RecentSection lang={lang} words={words} view={view} />
    <DeadLettersSection lang={lang} words={words} view={view} csrf={csrf} />
  </Layout>
);
