import { KAPPA_CAVEAT, type CurveBin, type QuestionReliability, type ReliabilityReport } from './reliability.ts';

/** Pixels of the chart, which a rasterizer renders at this size. */
export const CHART_WIDTH = 1280;
export const CHART_COLUMNS = 4;
const PANEL_W = CHART_WIDTH / CHART_COLUMNS;
const PANEL_H = 320;
const PLOT = { left: 52, top: 46, size: 200 };
/**
 * Bins with fewer labels than this are drawn faint and joined to no other: a line from a bin of
 * one label to a bin of six would read as a trend the labels do not show.
 */
export const MIN_LINE_N = 5;
/** The normal quantile of the 95 % interval drawn on each bin. */
const Z = 1.959964;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The questions that get a panel: those with at least one usable label (a panel of nothing reads as a result). */
export function chartedQuestions(report: ReliabilityReport): QuestionReliability[] {
  return report.questions.filter((q) => q.labeled > 0);
}

/** The chart's height for a report (one panel per labeled question group, then the caveat). */
export function chartHeight(report: ReliabilityReport): number {
  return 70 + Math.max(1, Math.ceil(chartedQuestions(report).length / CHART_COLUMNS)) * PANEL_H + 70;
}

/** The Wilson score interval of `k` agreeing of `n` (95 %): bounded by 0 and 1, and not empty at 0 or n. */
export function wilsonInterval(k: number, n: number): { lower: number; upper: number } {
  const p = k / n;
  const z2 = Z * Z;
  const centre = p + z2 / (2 * n);
  const half = Z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { lower: Math.max(0, (centre - half) / (1 + z2 / n)), upper: Math.min(1, (centre + half) / (1 + z2 / n)) };
}

/**
 * The reliability curves as one SVG (pure): a panel per question group with usable labels, the
 * chosen option's mean probability per bin against the share the labels agree with, a 95 %
 * interval on each bin, the diagonal of perfect reliability, points sized and shaded by their
 * count, a line only between adjacent bins of at least `MIN_LINE_N` labels, and each bin's n in
 * a row under the axis; a panel without a curve says why. Self-contained: no fonts or images
 * from anywhere.
 */
export function reliabilitySvg(report: ReliabilityReport): string {
  const h = chartHeight(report);
  const charted = chartedQuestions(report);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${CHART_WIDTH}" height="${h}" viewBox="0 0 ${CHART_WIDTH} ${h}" font-family="DejaVu Sans, Liberation Sans, sans-serif">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="16" y="30" font-size="20" font-weight="bold" fill="#111">trajwatch reliability: the judge's probability against human labels</text>`,
    `<text x="16" y="54" font-size="13" fill="#333">${esc(`${report.decisions} decisions (${report.failedCalls} failed calls), ${report.labeledDecisions} labeled, ${report.missingOutcomes} without an outcome label; ${report.questions.length - charted.length} question groups without labels not drawn; ${report.recordOnlyQuestions.length} record-only support choices not plotted`)}</text>`,
  ];
  if (charted.length === 0)
    parts.push(
      `<text class="no-labels" x="16" y="110" font-size="15" fill="#7a1f1f">No question has a usable label yet: label windows with trajwatch label, then draw this again.</text>`,
    );
  charted.forEach((q, i) => parts.push(panel(q, (i % CHART_COLUMNS) * PANEL_W, 70 + Math.floor(i / CHART_COLUMNS) * PANEL_H)));
  const words = KAPPA_CAVEAT.split(' ');
  const lines: string[] = [''];
  for (const w of words) {
    if ((lines.at(-1)! + ' ' + w).length > 170) lines.push(w);
    else lines[lines.length - 1] = `${lines.at(-1)!} ${w}`.trim();
  }
  lines.forEach((l, i) => parts.push(`<text x="16" y="${h - 50 + i * 17}" font-size="12.5" fill="#7a1f1f">${esc(l)}</text>`));
  parts.push('</svg>');
  return parts.join('\n');
}

/** Runs of adjacent bins (one bin's `hi` is the next's `lo`) each holding at least `MIN_LINE_N` labels: the only bins a line joins. */
function solidRuns(curve: readonly CurveBin[]): CurveBin[][] {
  const runs: CurveBin[][] = [];
  let run: CurveBin[] = [];
  for (const b of curve) {
    const prev = run.at(-1);
    if (b.n < MIN_LINE_N || (prev !== undefined && Math.abs(prev.hi - b.lo) > 1e-9)) {
      if (run.length > 1) runs.push(run);
      run = b.n < MIN_LINE_N ? [] : [b];
    } else run.push(b);
  }
  if (run.length > 1) runs.push(run);
  return runs;
}

function panel(q: QuestionReliability, x0: number, y0: number): string {
  const { left, top, size } = PLOT;
  const X = (p: number) => x0 + left + p * size;
  const Y = (a: number) => y0 + top + (1 - a) * size;
  const out: string[] = [
    `<g class="panel" data-question="${esc(q.target.questionId)}">`,
    `<text x="${x0 + 10}" y="${y0 + 18}" font-size="13" font-weight="bold" fill="#111">${esc(q.target.questionId + (q.recordOnly ? ' (record-only)' : ''))}</text>`,
    `<text class="subtitle" x="${x0 + 10}" y="${y0 + 35}" font-size="11" fill="#444">${esc(`${q.target.windowKind ?? '-'} · labeled ${q.labeled}/${q.decisions} · failed ${q.failed} · agree ${q.accuracy === null ? 'n/a' : q.accuracy.toFixed(2)}`)}</text>`,
    `<rect x="${X(0)}" y="${Y(1)}" width="${size}" height="${size}" fill="#fafafa" stroke="#999"/>`,
  ];
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    out.push(
      `<line x1="${X(t)}" y1="${Y(0)}" x2="${X(t)}" y2="${Y(1)}" stroke="#e3e3e3"/>`,
      `<line x1="${X(0)}" y1="${Y(t)}" x2="${X(1)}" y2="${Y(t)}" stroke="#e3e3e3"/>`,
    );
    out.push(
      `<text x="${X(t)}" y="${Y(0) + 14}" font-size="10" text-anchor="middle" fill="#555">${t}</text>`,
      `<text x="${X(0) - 5}" y="${Y(t) + 3}" font-size="10" text-anchor="end" fill="#555">${t}</text>`,
    );
  }
  out.push(`<line x1="${X(0)}" y1="${Y(0)}" x2="${X(1)}" y2="${Y(1)}" stroke="#888" stroke-dasharray="4 3"/>`);
  out.push(`<text x="${X(0.5)}" y="${Y(0) + 44}" font-size="10.5" text-anchor="middle" fill="#333">judge's probability of its answer (n per bin above)</text>`);
  out.push(
    `<text x="${x0 + 14}" y="${Y(0.5)}" font-size="10.5" text-anchor="middle" fill="#333" transform="rotate(-90 ${x0 + 14} ${Y(0.5)})">labels agree (95 % interval)</text>`,
  );
  if (q.curve === null) {
    out.push(
      `<text x="${X(0.5)}" y="${Y(0.55)}" font-size="11" text-anchor="middle" fill="#7a1f1f">no curve: fewer than two</text>`,
      `<text x="${X(0.5)}" y="${Y(0.45)}" font-size="11" text-anchor="middle" fill="#7a1f1f">labeled answers with probabilities</text>`,
      '</g>',
    );
    return out.join('\n');
  }
  const maxN = Math.max(...q.curve.map((b) => b.n));
  const xy = (b: CurveBin) => `${X(b.meanProbability).toFixed(1)},${Y(b.accuracy).toFixed(1)}`;
  for (const run of solidRuns(q.curve)) out.push(`<polyline class="curve" fill="none" stroke="#1f5fa8" stroke-width="2" points="${run.map(xy).join(' ')}"/>`);
  out.push(`<text x="${X(0) - 30}" y="${Y(0) + 28}" font-size="9.5" fill="#555">n</text>`);
  for (const b of q.curve) {
    const r = 3 + 6 * Math.sqrt(b.n / maxN);
    const cx = X(b.meanProbability).toFixed(1);
    const { lower, upper } = wilsonInterval(Math.round(b.accuracy * b.n), b.n);
    const opacity = b.n >= MIN_LINE_N ? 0.85 : 0.3 + (0.4 * (b.n - 1)) / (MIN_LINE_N - 1);
    out.push(
      `<line class="interval" data-n="${b.n}" x1="${cx}" y1="${Y(lower).toFixed(1)}" x2="${cx}" y2="${Y(upper).toFixed(1)}" stroke="#1f5fa8" stroke-opacity="${Math.min(0.8, opacity).toFixed(2)}" stroke-width="1.5"/>`,
    );
    for (const a of [lower, upper])
      out.push(
        `<line x1="${(Number(cx) - 3).toFixed(1)}" y1="${Y(a).toFixed(1)}" x2="${(Number(cx) + 3).toFixed(1)}" y2="${Y(a).toFixed(1)}" stroke="#1f5fa8" stroke-opacity="${Math.min(0.8, opacity).toFixed(2)}"/>`,
      );
    out.push(
      `<circle class="bin" data-n="${b.n}" cx="${cx}" cy="${Y(b.accuracy).toFixed(1)}" r="${r.toFixed(1)}" fill="#1f5fa8" fill-opacity="${opacity.toFixed(2)}"><title>${esc(`p ${b.lo.toFixed(1)}–${b.hi.toFixed(1)}: n ${b.n}, mean p ${b.meanProbability.toFixed(3)}, agree ${b.accuracy.toFixed(3)} (95 % ${lower.toFixed(2)}–${upper.toFixed(2)})`)}</title></circle>`,
    );
    // Each bin's count in a row under the axis, at the bin's middle: never over the titles, never over another count.
    out.push(`<text class="bin-n" x="${X((b.lo + b.hi) / 2).toFixed(1)}" y="${Y(0) + 28}" font-size="9.5" text-anchor="middle" fill="#1f5fa8">${b.n}</text>`);
  }
  out.push('</g>');
  return out.join('\n');
}
