/**
 * The TRAIL dev traces of this run (test/helpers/trail-corpus.ts says which) as trajectories, built with the project's
 * own decoder and normalizer: one trajectory per trace file, steps in trajectory order, complete
 * when a root span is present and no parent is missing. Test, script and bench helper: labels
 * are read here for measuring only, never by the analyzer.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { compareSteps } from '../../src/assemble/step-order.ts';
import type { IncompleteReason, Trajectory } from '../../src/assemble/trajectory.ts';
import { DecodeError } from '../../src/errors.ts';
import { decodeOtlpJson } from '../../src/ingest/otlp/json-decode.ts';
import type { Span } from '../../src/ingest/span.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import type { Step } from '../../src/normalize/step.ts';
import { type TrailCorpus, trailCorpus } from '../helpers/trail-corpus.ts';

export interface TrailLabel {
  category: string;
  location: string;
  evidence?: string;
  description?: string;
  impact?: string;
}

export interface TrailTrace {
  traceId: string;
  /** The decoded spans, for assertions made independently of the normalizer. */
  spans: Span[];
  trajectory: Trajectory;
  labels: TrailLabel[];
}

/** Decode, normalize and assemble one fixture's spans into one trajectory. */
export function trajectoryFromSpans(traceId: string, spans: Span[]): Trajectory {
  const steps: Step[] = spans.map(normalizeSpan).sort(compareSteps);
  const ids = new Set(steps.map((s) => s.id));
  const reasons: IncompleteReason[] = [];
  if (!steps.some((s) => s.parentId === undefined)) reasons.push('root-not-seen');
  if (steps.some((s) => s.parentId !== undefined && !ids.has(s.parentId))) reasons.push('orphan-parents');
  return {
    key: traceId,
    traceIds: [traceId],
    revision: 1,
    complete: reasons.length === 0,
    incompleteReasons: reasons,
    steps,
    conflicts: [],
    refusedSpans: 0,
    closedBy: 'end-of-input',
  };
}

/** Every TRAIL dev trace of `corpus` (this run's by default), decoded, as a trajectory with its labels. */
export function loadTrailTraces(corpus: TrailCorpus = trailCorpus()): TrailTrace[] {
  return corpus.files.map(({ traceId, otlpPath, labelsPath }) => {
    const decoded = decodeOtlpJson(gunzipSync(readFileSync(otlpPath)).toString('utf8'));
    if (decoded instanceof DecodeError) throw decoded;
    if (decoded.rejected.length > 0) throw new Error(`${traceId}: decoder rejected ${decoded.rejected.length} spans`);
    const labels = (JSON.parse(readFileSync(labelsPath, 'utf8')) as { errors: TrailLabel[] }).errors;
    return { traceId, spans: decoded.spans, trajectory: trajectoryFromSpans(traceId, decoded.spans), labels };
  });
}
