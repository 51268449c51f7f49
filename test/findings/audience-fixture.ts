import { expect } from 'vitest';
import { checksConfigSchema } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import { INTERNAL_FIELDS } from '../../src/findings/audience.ts';
import { findingsFromChecks } from '../../src/findings/from-checks.ts';
import { buildManifest } from '../../src/findings/manifest.ts';
import type { AnalysisManifest } from '../../src/findings/manifest-schema.ts';
import { parseProvenanceConfig } from '../../src/findings/provenance/config.ts';
import { deriveProvenance } from '../../src/findings/provenance/derive.ts';
import { NO_PROVENANCE } from '../../src/findings/provenance/provenance.ts';
import type { Finding } from '../../src/findings/schema.ts';
import { judgedFindings } from '../../src/judge/judged-findings.ts';
import type { ResultRecord } from '../../src/judge/ledger/record.ts';
import type { TraceWindow } from '../../src/windows/window.ts';
import { agent, tool, trajectory } from '../checks/builders.ts';
import { sampleTrajectory } from './trajectory-fixture.ts';

/**
 * Records with every kind of internal field, as the real producers make them: a judged
 * finding (model ids, receipt, certificate id, ledger key, window-policy digest), its exact
 * replay (the original receipt under `replay`), a judged failure, L0 findings and a manifest.
 * The markers are distinctive strings, so a leak shows in the serialized record whatever key
 * it hides under.
 */
export const MARKERS = {
  requestedModel: 'judge-model-REQUESTED-7',
  servedModel: 'judge-model-SERVED-7',
  policyDigest: 'd'.repeat(63) + 'e',
  certificateId: 'cert1_INTERNAL_CERTIFICATE',
  runId: 'run-INTERNAL-RUN-ID',
  cost: 0.0421,
} as const;

const TRACE = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

function windowAt(): TraceWindow {
  return {
    id: `w1_${'1'.repeat(24)}`,
    kind: 'turn',
    triggers: ['terminal'],
    anchor: `${TRACE}/0000000000000001`,
    traceIds: [TRACE],
    subject: { trajectoryKey: TRACE, revision: 1 },
    startedAt: '2026-01-01T00:00:00.000000000Z',
    endedAt: '2026-01-01T00:00:02.000000000Z',
    limitations: [],
    events: [1, 2].map((i) => ({ id: `e${i}`, content: '{}', evidenceRefs: [{ kind: 'span', uri: `span:${TRACE}/000000000000000${i}` }] })),
    redactions: 0,
    policyDigest: MARKERS.policyDigest,
  } as TraceWindow;
}

function result(w: TraceWindow, option: 'yes' | null): ResultRecord {
  return {
    v: 1,
    type: 'result',
    key: { point: 'trace-questions@1', runId: MARKERS.runId, invocationId: `${w.id}@1` },
    inputDigest: 'c'.repeat(64),
    owner: 'test',
    requestedModel: MARKERS.requestedModel,
    servedModel: option === null ? null : MARKERS.servedModel,
    windowPolicyDigest: MARKERS.policyDigest,
    failure: option === null ? { kind: 'http', status: 503, message: `upstream ${MARKERS.requestedModel} overloaded` } : null,
    answers: [
      {
        questionId: 'tool.error-ignored',
        questionVersion: '1',
        option,
        probabilities: option === null ? null : { yes: 0.91, no: 0.09 },
        unseenBound: null,
        support: option === null ? null : 'e1',
        recommendation: { action: option === null ? 'escalate' : 'act', route: null, reason: 'test' },
        certificateId: option === null ? null : MARKERS.certificateId,
      },
    ],
    recommendation: { action: 'act', route: null, reason: 'test' },
    receipt: { promptTokens: 120, completionTokens: 3, totalTokens: 123, cost: MARKERS.cost, currency: 'USD', attempts: 1 },
    recordedAt: '2026-01-01T00:00:03.000Z',
  };
}

const t = trajectory([agent('done', { at: 0, end: 9 }), tool('search', { at: 1, args: '{}' })]);

export const judgedFinding = (): Finding => judgedFindings(t, windowAt(), result(windowAt(), 'yes'), NO_PROVENANCE).findings[0]!;
export const replayedFinding = (): Finding => judgedFindings(t, windowAt(), result(windowAt(), 'yes'), NO_PROVENANCE, true).findings[0]!;
export const failedJudgedFinding = (): Finding => judgedFindings(t, windowAt(), result(windowAt(), null), NO_PROVENANCE).findings[0]!;

export function l0Findings(): Finding[] {
  const s = sampleTrajectory();
  return findingsFromChecks(s, runChecks(s, checksConfigSchema.parse({})), deriveProvenance(s, parseProvenanceConfig({})));
}

export function sampleManifest(): AnalysisManifest {
  const s = sampleTrajectory();
  const checks = runChecks(s, checksConfigSchema.parse({}));
  const provenance = deriveProvenance(s, parseProvenanceConfig({}));
  return buildManifest({ trajectory: s, checks, findings: findingsFromChecks(s, checks, provenance), provenance, judge: 'disabled', windows: [] });
}

/** Every record kind the audience rule covers. */
export const allRecords = (): (Finding | AnalysisManifest)[] => [judgedFinding(), replayedFinding(), failedJudgedFinding(), ...l0Findings(), sampleManifest()];

const has = (o: unknown, path: string): boolean => {
  let node: unknown = o;
  for (const k of path.split('.')) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, k)) return false;
    node = (node as Record<string, unknown>)[k];
  }
  return true;
};

const MARKER_TEXTS = [MARKERS.requestedModel, MARKERS.servedModel, MARKERS.policyDigest, MARKERS.certificateId, MARKERS.runId, String(MARKERS.cost)];

/** The external direction: none of the internal fields, no internal marker anywhere in the text. */
export function expectExternalView(record: unknown): void {
  const text = JSON.stringify(record);
  for (const marker of MARKER_TEXTS) expect(text, `external view leaks ${marker}`).not.toContain(marker);
  for (const path of [...INTERNAL_FIELDS.finding, ...INTERNAL_FIELDS.manifest]) expect(has(record, path), `external view has ${path}`).toBe(false);
  // What stays: the claim and its id.
  expect(record).toHaveProperty('subject');
  expect(JSON.stringify(record)).toMatch(/"(claim|manifest_id)":/);
}

/**
 * The internal direction: every internal field the original had is still there, equal; for
 * the judged fixtures, the markers are present (so the external check above is not vacuous).
 */
export function expectInternalView(record: unknown, original: Finding | AnalysisManifest): void {
  expect(record).toEqual(original);
  const judged = 'method' in original && original.method.kind === 'judged';
  if (judged) {
    const text = JSON.stringify(record);
    expect(text).toContain(MARKERS.requestedModel);
    expect(text).toContain(MARKERS.policyDigest);
    expect(text).toContain(MARKERS.runId);
  }
}
