import { describe, expect, it } from 'vitest';
import { judgedFindings, repetitionFinding } from '../../src/judge/judged-findings.ts';
import type { ResultRecord } from '../../src/judge/ledger/record.ts';
import { NO_PROVENANCE } from '../../src/findings/provenance/provenance.ts';
import type { TraceWindow } from '../../src/windows/window.ts';
import { agent, tool, trajectory } from '../checks/builders.ts';

const TRACE = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const HEX = 'c'.repeat(64);

function windowAt(revision: number, events: number): TraceWindow {
  return {
    id: `w1_${String(revision).repeat(24).slice(0, 24)}`,
    kind: 'turn',
    triggers: ['terminal'],
    anchor: `${TRACE}/0000000000000001`,
    traceIds: [TRACE],
    subject: { trajectoryKey: TRACE, revision },
    startedAt: '2026-01-01T00:00:00.000000000Z',
    endedAt: `2026-01-01T00:00:0${events}.000000000Z`,
    limitations: [],
    events: Array.from({ length: events }, (_, i) => ({
      id: `e${i + 1}`,
      content: '{}',
      evidenceRefs: [{ kind: 'span', uri: `span:${TRACE}/000000000000000${i + 1}` }],
    })),
    redactions: 0,
    policyDigest: HEX,
  } as TraceWindow;
}

function result(w: TraceWindow, option: 'yes' | null, failure: ResultRecord['failure'] = null): ResultRecord {
  return {
    v: 1,
    type: 'result',
    key: { point: 'trace-questions@1', runId: TRACE, invocationId: `${w.id}@${w.subject.revision}` },
    inputDigest: HEX,
    owner: 'test',
    requestedModel: 'm',
    servedModel: option === null ? null : 'm',
    windowPolicyDigest: HEX,
    failure,
    answers: [
      {
        questionId: 'tool.error-ignored',
        questionVersion: '1',
        option,
        probabilities: null,
        unseenBound: null,
        support: option === null ? null : 'e1',
        recommendation: { action: option === null ? 'escalate' : 'record', route: null, reason: 'test' },
        certificateId: null,
      },
    ],
    recommendation: { action: 'record', route: null, reason: 'test' },
    receipt: { promptTokens: null, completionTokens: null, totalTokens: null, cost: null, currency: null, attempts: 1 },
    recordedAt: 'not identity',
  };
}

describe('judged findings keep their identity across revisions of the same window', () => {
  const t = trajectory([agent('done', { at: 0, end: 9 }), tool('search', { at: 1, args: '{}' })]);
  const r1 = windowAt(1, 2);
  const r2 = windowAt(2, 3);

  it('the same answer to the same question about the window at the same anchor is one finding_id', () => {
    const [a] = judgedFindings(t, r1, result(r1, 'yes'), NO_PROVENANCE).findings;
    const [b] = judgedFindings({ ...t, revision: 2 }, r2, result(r2, 'yes'), NO_PROVENANCE).findings;
    expect(a!.claim).not.toContain(r1.id);
    expect(b!.finding_id).toBe(a!.finding_id);
    expect((b!.observation as unknown as { values: { window_id: string } }).values.window_id).toBe(r2.id);
  });

  it('a failed call is the same claim whatever the failure kind, which rides in the observation', () => {
    const [a] = judgedFindings(t, r1, result(r1, null, { kind: 'timeout', message: 'x' }), NO_PROVENANCE).findings;
    const [b] = judgedFindings(t, r2, result(r2, null, { kind: 'http', status: 500, message: 'y' }), NO_PROVENANCE).findings;
    expect(b!.finding_id).toBe(a!.finding_id);
    expect(a!.claim).not.toContain('timeout');
  });

  it('the computed repetition observation of the window keeps its id across revisions', () => {
    const a = repetitionFinding(t, r1, { l0: [], repetition: { status: 'none-observed' }, silenced: [] }, NO_PROVENANCE);
    const b = repetitionFinding({ ...t, revision: 2 }, r2, { l0: [], repetition: { status: 'none-observed' }, silenced: [] }, NO_PROVENANCE);
    expect(b.finding_id).toBe(a.finding_id);
  });
});
