import { KAPPA_CAVEAT, type QuestionReliability, type ReliabilityReport } from './reliability.ts';

/** Pixels of the chart, which a rasterizer renders at this size. */
export const CHART_WIDTH = 1280;
export const CHART_COLUMNS = 4;
const PANEL_W = CHART_WIDTH / CHART_COLUMNS;
const PANEL_H = 300;
const PLOT = { left: 52, top: 46, size: 200 };

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The chart's height for a report (one panel per question group, then the caveat). */
export function chartHeight(report: ReliabilityReport): number {
  return 70 + Math.max(1, Math.ceil(report.questions.length / CHART_COLUMNS)) * PANEL_H + 70;
}

/**
 * The reliability curves as one SVG (pure): a panel per question group, the chosen option's
 * mean probability per bin against the share the labels agree with, the diagonal of perfect
 * reliability, points sized by their count; a panel without a curve says why. Self-contained:
 * no fonts or images from anywhere.
 */
export function reliabilitySvg(report: ReliabilityReport): string {
  const h = chartHeight(report);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${CHART_WIDTH}" height="${h}" viewBox="0 0 ${CHART_WIDTH} ${h}" font-family="DejaVu Sans, Liberation Sans, sans-serif">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="16" y="30" font-size="20" font-weight="bold" fill="#111">trajwatch reliability: the judge's probability against human labels</text>`,
    `<text x="16" y="54" font-size="13" fill="#333">${esc(`${report.decisions} decisions (${report.failedCalls} failed calls), ${report.labeledDecisions} labeled, ${report.missingOutcomes} without an outcome label; ${report.recordOnlyQuestions.length} record-only support choices not plotted`)}</text>`,
  ];
  report.questions.forEach((q, i) => parts.push(panel(q, (i % CHART_COLUMNS) * PANEL_W, 70 + Math.floor(i / CHART_COLUMNS) * PANEL_H)));
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

function panel(q: QuestionReliability, x0: number, y0: number): string {
  const { left, top, size } = PLOT;
  const X = (p: number) => x0 + left + p * size;
  const Y = (a: number) => y0 + top + (1 - a) * size;
  const out: string[] = [
    `<text x="${x0 + 10}" y="${y0 + 18}" font-size="13" font-weight="bold" fill="#111">${esc(q.target.questionId + (q.recordOnly ? ' (record-only)' : ''))}</text>`,
    `<text x="${x0 + 10}" y="${y0 + 35}" font-size="11" fill="#444">${esc(`${q.target.windowKind ?? '-'} · labeled ${q.labeled}/${q.decisions} · failed ${q.failed} · agree ${q.accuracy === null ? 'n/a' : q.accuracy.toFixed(2)}`)}</text>`,
    `<rect x="${X(0)}" y="${Y(1)}" width="${size}" height="${size}" fill="#fafafa" stroke="#999"/>`,
  ];
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    out.push(`<line x1="${X(t)}" y1="${Y(0)}" x2="${X(t)}" y2="${Y(1)}" stroke="#e3e3e3"/>`, `<line x1="${X(0)}" y1="${Y(t)}" x2="${X(1)}" y2="${Y(t)}" stroke="#e3e3e3"/>`);
    out.push(`<text x="${X(t)}" y="${Y(0) + 14}" font-size="10" text-anchor="middle" fill="#555">${t}</text>`, `<text x="${X(0) - 5}" y="${Y(t) + 3}" font-size="10" text-anchor="end" fill="#555">${t}</text>`);
  }
  out.push(`<line x1="${X(0)}" y1="${Y(0)}" x2="${X(1)}" y2="${Y(1)}" stroke="#888" stroke-dasharray="4 3"/>`);
  out.push(`<text x="${X(0.5)}" y="${Y(0) + 28}" font-size="10.5" text-anchor="middle" fill="#333">judge's probability of its answer</text>`);
  out.push(`<text x="${x0 + 14}" y="${Y(0.5)}" font-size="10.5" text-anchor="middle" fill="#333" transform="rotate(-90 ${x0 + 14} ${Y(0.5)})">labels agree</text>`);
  if (q.curve === null) {
    out.push(`<text x="${X(0.5)}" y="${Y(0.55)}" font-size="11" text-anchor="middle" fill="#7a1f1f">no curve: fewer than two</text>`, `<text x="${X(0.5)}" y="${Y(0.45)}" font-size="11" text-anchor="middle" fill="#7a1f1f">labeled answers with probabilities</text>`);
    return out.join('\n');
  }
  const maxN = Math.max(...q.curve.map((b) => b.n));
  out.push(`<polyline fill="none" stroke="#1f5fa8" stroke-width="2" points="${q.curve.map((b) => `${X(b.meanProbability).toFixed(1)},${Y(b.accuracy).toFixed(1)}`).join(' ')}"/>`);
  for (const b of q.curve) {
    const r = 3 + 6 * Math.sqrt(b.n / maxN);
    out.push(`<circle cx="${X(b.meanProbability).toFixed(1)}" cy="${Y(b.accuracy).toFixed(1)}" r="${r.toFixed(1)}" fill="#1f5fa8" fill-opacity="0.75"><title>${esc(`p ${b.lo.toFixed(1)}–${b.hi.toFixed(1)}: n ${b.n}, mean p ${b.meanProbability.toFixed(3)}, agree ${b.accuracy.toFixed(3)}`)}</title></circle>`);
    out.push(`<text x="${(X(b.meanProbability) + r + 2).toFixed(1)}" y="${(Y(b.accuracy) - r).toFixed(1)}" font-size="9.5" fill="#1f5fa8">n=${b.n}</text>`);
  }
  return out.join('\n');
}
