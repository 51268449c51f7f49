import { byLabel, mirrorCounter, mirrorTotal, readGauge, type MetricRegistry } from '../telemetry/metrics.ts';
import type { ReassemblyStats } from './reassembly.ts';

/**
 * Stage 2's reassembly of fragmented traces, read at scrape time: the gauges
 * `trajwatch_repartition_reassembly_bytes` (held, bounded by `maxReassemblyBytes`) and
 * `_traces` (not yet whole), `trajwatch_repartition_reassembled_total{outcome}` (`whole`,
 * `superseded` by a later whole copy of the trace, or lost: `deadline`, `over-bound`,
 * `digest-mismatch`) and `trajwatch_repartition_fragment_duplicates_total`.
 */
export function registerReassemblyMetrics(registry: MetricRegistry, read: () => ReassemblyStats): void {
  if (registry === undefined) return;
  readGauge(registry, 'trajwatch_repartition_reassembly_bytes', 'Bytes of fragments held for traces not yet whole.', () => read().heldBytes);
  readGauge(registry, 'trajwatch_repartition_reassembly_traces', 'Fragmented traces not yet whole.', () => read().partialTraces);
  mirrorCounter(
    registry,
    'trajwatch_repartition_reassembled_total',
    'Fragmented traces by what became of them: whole, superseded (another copy arrived whole), or lost (deadline, over-bound, digest-mismatch; the session is marked repartition-fragment-lost).',
    ['outcome'],
    () => {
      const s = read();
      return byLabel('outcome', { whole: s.whole, superseded: s.superseded, ...s.lost });
    },
  );
  mirrorTotal(
    registry,
    'trajwatch_repartition_fragment_duplicates_total',
    'Fragments received again (redelivered or forwarded again): ignored.',
    () => read().duplicates,
  );
}
