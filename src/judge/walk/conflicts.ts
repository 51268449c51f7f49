import type { CheckResults } from '../../checks/check-result.ts';
import { spanUri } from '../../core/evidence-ref.ts';
import type { LayerVerdict, WalkLayer } from '../../findings/schema.ts';
import type { TraceWindow } from '../../windows/window.ts';
import { PATTERN_LAYER } from './layer-sites.ts';

/** Two things the walk found that cannot both be the whole story. Surfaced for a human, never reconciled. */
export interface LayerConflict {
  kind: 'l0-contradicted' | 'layers-disagree';
  layers: [WalkLayer, WalkLayer];
  verdicts: [string, string];
  /** The L0 anchor (`<traceId>/<spanId>`) for `l0-contradicted`. */
  anchor?: string;
  detail: string;
}

/** A judged window's routing answer, as conflicts read it. */
export interface JudgedSite {
  layer: WalkLayer;
  window: TraceWindow;
  /** The routing question's option; null when there was no valid answer. */
  option: string | null;
}

/**
 * Layer pairs whose verdicts contradict: the outcome passed while the path or what it rests on
 * failed ("the outcome was right, the path unguarded"), or the outcome failed on a path judged
 * right. L1 fail with L3 or L4 pass is not a contradiction: tools can be fine and the answer wrong.
 */
const DISAGREEMENTS: readonly { a: WalkLayer; av: string; b: WalkLayer; bv: string }[] = [
  { a: 'L1', av: 'pass', b: 'L2', bv: 'fail' },
  { a: 'L1', av: 'fail', b: 'L2', bv: 'pass' },
  { a: 'L1', av: 'pass', b: 'L3', bv: 'fail' },
  { a: 'L1', av: 'pass', b: 'L4', bv: 'fail' },
];

/**
 * Every conflict of one walk. Pure. An L0 candidate is contradicted when a judged window of the
 * layer that settles its pattern covers the hit's anchor and answered `no` (no problem there);
 * two layers disagree per `DISAGREEMENTS`. Both sides stay as they are: nothing here changes a
 * verdict or a recommendation.
 */
export function layerConflicts(checks: CheckResults, verdicts: readonly LayerVerdict[], judged: readonly JudgedSite[]): LayerConflict[] {
  const out: LayerConflict[] = [];
  for (const hit of checks.l0) {
    const layer = PATTERN_LAYER[hit.pattern];
    const at = hit.evidence.find((e) => e.spanId === hit.anchor);
    const uri = at === undefined ? undefined : spanUri(at.traceId, at.spanId);
    for (const s of judged) {
      if (s.layer !== layer || s.option !== 'no') continue;
      const covers = s.window.events.some((e) => e.evidenceRefs.some((r) => (uri === undefined ? r.uri.endsWith(`/${hit.anchor}`) : r.uri === uri)));
      if (!covers) continue;
      out.push({
        kind: 'l0-contradicted',
        layers: ['L0', layer],
        verdicts: ['fired', 'pass'],
        anchor: at === undefined ? hit.anchor : `${at.traceId}/${at.spanId}`,
        detail: `${hit.pattern} fired at ${hit.anchor}; the ${layer} window ${s.window.id} covering it answered no`,
      });
      break;
    }
  }
  const by = new Map(verdicts.map((v) => [v.layer, v.verdict]));
  for (const d of DISAGREEMENTS) {
    if (by.get(d.a) === d.av && by.get(d.b) === d.bv) {
      out.push({ kind: 'layers-disagree', layers: [d.a, d.b], verdicts: [d.av, d.bv], detail: `${d.a} ${d.av}, ${d.b} ${d.bv}` });
    }
  }
  return out;
}
