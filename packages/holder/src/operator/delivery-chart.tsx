/**
 * The operator page's chart of delivery, drawn on the server as inline SVG: a bar per bin
 * (delivered below, failed on top, on the left scale) and the mean attempt time as a line (on
 * the right scale). Readable without script or colour: the SVG is an image with a title and a
 * description that give the totals, and every bin's figures follow in a table.
 */
import type { StatsBin } from "@doorbell/delivery";
import type { FC } from "hono/jsx";
import { formatNumber } from "../i18n/format.js";
import type { OperatorWords } from "../i18n/operator-words.js";
import type { Lang } from "../model/languages.js";

const WIDTH = 720;
const HEIGHT = 220;
const LEFT = 48;
const RIGHT = 60;
const TOP = 12;
const BOTTOM = 28;
const PLOT_W = WIDTH - LEFT - RIGHT;
const PLOT_H = HEIGHT - TOP - BOTTOM;

/** The smallest 1, 2 or 5 × 10ⁿ at or above `value` (at least 1): a scale's top. */
export function niceTop(value: number): number {
  if (!(value > 1)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

export interface ChartTotals {
  delivered: number;
  failed: number;
  /** Mean attempt time over every attempt of the range, in ms; null without attempts. */
  meanMs: number | null;
  longestMs: number | null;
}

export function totalsOf(bins: readonly StatsBin[]): ChartTotals {
  let delivered = 0;
  let failed = 0;
  let timeSum = 0;
  let longest: number | null = null;
  for (const bin of bins) {
    delivered += bin.successes;
    failed += bin.failures;
    if (bin.meanMs !== null) timeSum += bin.meanMs * (bin.successes + bin.failures);
    if (bin.maxMs !== null) longest = Math.max(longest ?? 0, bin.maxMs);
  }
  const attempts = delivered + failed;
  return {
    delivered,
    failed,
    meanMs: attempts === 0 ? null : Math.round(timeSum / attempts),
    longestMs: longest,
  };
}

const percent = (part: number, whole: number, lang: Lang): string =>
  whole === 0 ? "–" : `${formatNumber(Math.round((1000 * part) / whole) / 10, lang)} %`;

export const DeliveryChart: FC<{
  id: string;
  title: string;
  bins: readonly StatsBin[];
  /** The x-axis label of a bin (an hour or a day), and its full name in the table. */
  label: (start: number) => string;
  fullLabel: (start: number) => string;
  /** Every how many bins an x-axis label is written. */
  labelEvery: number;
  words: OperatorWords;
  lang: Lang;
}> = ({ id, title, bins, label, fullLabel, labelEvery, words, lang }) => {
  const w = words.chart;
  const ms = (value: number | null) => (value === null ? "–" : w.milliseconds(formatNumber(value, lang)));
  const totals = totalsOf(bins);
  const attempts = totals.delivered + totals.failed;
  const description =
    attempts === 0
      ? w.nothing
      : w.summary(
          totals.delivered,
          totals.failed,
          percent(totals.delivered, attempts, lang),
          ms(totals.meanMs),
          ms(totals.longestMs),
        );
  const countTop = niceTop(Math.max(0, ...bins.map((bin) => bin.successes + bin.failures)));
  const timeTop = niceTop(Math.max(0, ...bins.map((bin) => bin.meanMs ?? 0)));
  const step = PLOT_W / Math.max(1, bins.length);
  const barWidth = Math.max(1, step * 0.7);
  const y = (count: number) => TOP + PLOT_H - (PLOT_H * count) / countTop;
  const yTime = (value: number) => TOP + PLOT_H - (PLOT_H * value) / timeTop;
  const x = (index: number) => LEFT + index * step + (step - barWidth) / 2;
  const centre = (index: number) => LEFT + index * step + step / 2;
  // The mean time as a line broken where a bin had no attempt.
  let path = "";
  let drawing = false;
  bins.forEach((bin, index) => {
    if (bin.meanMs === null) {
      drawing = false;
      return;
    }
    path += `${drawing ? "L" : "M"}${centre(index).toFixed(1)} ${yTime(bin.meanMs).toFixed(1)} `;
    drawing = true;
  });
  const grid = [0, 0.5, 1];
  return (
    <figure class="chart" aria-labelledby={`${id}-caption`}>
      <figcaption id={`${id}-caption`}>
        <h3>{title}</h3>
        <ul class="legend">
          <li>
            <span class="swatch ok" aria-hidden="true" />
            {w.delivered}
          </li>
          <li>
            <span class="swatch fail" aria-hidden="true" />
            {w.failed}
          </li>
          <li>
            <span class="swatch line" aria-hidden="true" />
            {w.meanTime}
          </li>
        </ul>
      </figcaption>
      <svg
        role="img"
        aria-labelledby={`${id}-title ${id}-desc`}
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width="100%"
        preserveAspectRatio="xMidYMid meet"
        class="plot"
      >
        <title id={`${id}-title`}>{title}</title>
        <desc id={`${id}-desc`}>{description}</desc>
        {grid.map((share) => (
          <g>
            <line
              class="grid"
              x1={LEFT}
              x2={LEFT + PLOT_W}
              y1={y(countTop * share)}
              y2={y(countTop * share)}
            />
            <text class="tick" x={LEFT - 6} y={y(countTop * share) + 4} text-anchor="end">
              {formatNumber(countTop * share, lang)}
            </text>
            <text class="tick" x={LEFT + PLOT_W + 6} y={yTime(timeTop * share) + 4} text-anchor="start">
              {ms(timeTop * share)}
            </text>
          </g>
        ))}
        {bins.map((bin, index) => (
          <g>
            {bin.successes > 0 && (
              <rect
                class="bar-ok"
                x={x(index)}
                width={barWidth}
                y={y(bin.successes)}
                height={TOP + PLOT_H - y(bin.successes)}
              />
            )}
            {bin.failures > 0 && (
              <rect
                class="bar-fail"
                x={x(index)}
                width={barWidth}
                y={y(bin.successes + bin.failures)}
                height={y(bin.successes) - y(bin.successes + bin.failures)}
              />
            )}
            {index % labelEvery === 0 && (
              <text class="tick" x={centre(index)} y={HEIGHT - 8} text-anchor="middle">
                {label(bin.start)}
              </text>
            )}
          </g>
        ))}
        {path !== "" && <path class="time" d={path.trim()} />}
        {bins.map((bin, index) =>
          bin.meanMs === null ? null : (
            <circle class="time-dot" cx={centre(index)} cy={yTime(bin.meanMs)} r={3} />
          ),
        )}
      </svg>
      <p class="muted">{description}</p>
      <details>
        <summary>{w.figures}</summary>
        <table>
          <caption class="muted">{title}</caption>
          <thead>
            <tr>
              <th scope="col">{w.from}</th>
              <th scope="col">{w.delivered}</th>
              <th scope="col">{w.failed}</th>
              <th scope="col">{w.successRate}</th>
              <th scope="col">{w.meanTime}</th>
              <th scope="col">{w.longest}</th>
            </tr>
          </thead>
          <tbody>
            {bins.map((bin) => (
              <tr>
                <th scope="row">{fullLabel(bin.start)}</th>
                <td>{formatNumber(bin.successes, lang)}</td>
                <td>{formatNumber(bin.failures, lang)}</td>
                <td>{percent(bin.successes, bin.successes + bin.failures, lang)}</td>
                <td>{ms(bin.meanMs)}</td>
                <td>{ms(bin.maxMs)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
};
