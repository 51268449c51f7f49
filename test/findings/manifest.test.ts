import { describe, expect, it } from 'vitest';
import { checksConfigSchema } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import { findingsFromChecks } from '../../src/findings/from-checks.ts';
import { buildManifest, type ManifestInput } from '../../src/findings/manifest.ts';
import { AnalysisManifestSchema, MANIFEST_CHECKS } from '../../src/findings/manifest-schema.ts';
import { parseProvenanceConfig } from '../../src/findings/provenance/config.ts';
import { deriveProvenance } from '../../src/findings/provenance/derive.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { sampleTrajectory, step, trajectory } from './trajectory-fixture.ts';

const CHECKS = checksConfigSchema.parse({});

function input(t: Trajectory, over: Partial<ManifestInput> = {}): ManifestInput {
  const checks = runChecks(t, CHECKS);
  const provenance = deriveProvenance(t, parseProvenanceConfig({}));
  return { trajectory: t, checks, findings: findingsFromChecks(t, checks, provenance), provenance, judge: 'disabled', windows: [], ...over };
}

const JUDGED = {
  window_id: `w1_${'0'.repeat(24)}`,
  kind: 'event' as const,
  anchor: `${'aa'.repeat(16)}/0000000000000004`,
  triggers: ['l0-hit' as const],
  fate: 'judged' as const,
  finding_ids: [`f1_${'c'.repeat(64)}`],
};

describe('buildManifest', () => {
  it('is pure and schema-valid, with one status per check in a fixed order; the id covers what the manifest says', () => {
    const a = buildManifest(input(sampleTrajectory()));
    expect(JSON.stringify(buildManifest(input(sampleTrajectory())))).toBe(JSON.stringify(a));
    expect(AnalysisManifestSchema.parse(a)).toEqual(a);
    expect(a.checks.map((c) => c.check)).toEqual([...MANIFEST_CHECKS]);
    // The same revision analyzed to a different outcome (a window judged, not deferred) is another record.
    const judged = buildManifest(input(sampleTrajectory(), { judge: 'enabled', windows: [JUDGED] }));
    const deferred = buildManifest(
      input(sampleTrajectory(), { judge: 'enabled', windows: [{ ...JUDGED, fate: 'deferred', reason: 'shutdown', finding_ids: [] }] }),
    );
    expect(new Set([a.manifest_id, judged.manifest_id, deferred.manifest_id]).size).toBe(3);
  });

  it('names each fired check’s findings and the provenance not derived when no finding needed it', () => {
    const t = sampleTrajectory();
    const m = buildManifest(input(t));
    const fired = m.checks.filter((c) => c.status === 'fired' || c.status === 'observed');
    expect(fired.length).toBeGreaterThan(0);
    const ids = new Set(input(t).findings.map((f) => f.finding_id));
    expect(fired.flatMap((c) => c.finding_ids).sort()).toEqual([...ids].sort());

    const quiet = trajectory([step({ id: '0000000000000001', kind: 'agent', name: 'invoke_agent' })]);
    const q = buildManifest({ ...input(quiet), findings: [], provenance: undefined });
    expect(q.provenance).toEqual({ status: 'not-derived', reason: 'no-finding' });
    expect(q.checks.every((c) => c.status === 'none-observed')).toBe(true);
  });

  it('claims no absence the capture cannot support: arguments not captured make malformed-structure and repetition unavailable', () => {
    const t = trajectory([
      step({ id: '0000000000000001', kind: 'agent', name: 'invoke_agent' }),
      step({ id: '0000000000000002', parentId: '0000000000000001', toolName: 'lookup' }),
    ]);
    const byCheck = Object.fromEntries(buildManifest(input(t)).checks.map((c) => [c.check, c]));
    expect(byCheck['malformed-structure']).toMatchObject({ status: 'unavailable', reason: 'tool-args-not-captured' });
    expect(byCheck['tool-repetition']).toMatchObject({ status: 'unavailable', reason: 'tool-args-not-captured' });
    // Its result was not captured either: it may have been an error payload.
    expect(byCheck['error-output']).toMatchObject({ status: 'unavailable', reason: 'tool-result-not-captured' });
    // With the arguments and result captured, nothing hides a failure.
    const captured = trajectory([
      step({ id: '0000000000000001', kind: 'agent', name: 'invoke_agent' }),
      step({ id: '0000000000000002', parentId: '0000000000000001', toolName: 'lookup', args: { raw: '{}', parsed: {}, digest: 'd0' }, result: 'ok' }),
    ]);
    expect(buildManifest(input(captured)).checks.find((c) => c.check === 'error-output')!.status).toBe('none-observed');
  });

  it('a complete capture whose gaps kept an absence check from running says so, never none-observed', () => {
    const args = { raw: '{"to":"a@b.c"}', parsed: { to: 'a@b.c' }, digest: 'd1' };
    const t = trajectory([
      step({ id: '0000000000000001', kind: 'agent', name: 'invoke_agent' }),
      // The model asked for an approval whose tool span was never captured, then the send ran.
      step({ id: '0000000000000002', parentId: '0000000000000001', kind: 'llm', name: 'chat', requestedToolCalls: [{ id: 'c1', name: 'approve_send' }] }),
      step({ id: '0000000000000003', parentId: '0000000000000001', toolName: 'send_email', args, result: 'sent' }),
    ]);
    expect(t.complete).toBe(true);
    const byCheck = Object.fromEntries(buildManifest(input(t)).checks.map((c) => [c.check, c]));
    expect(byCheck['unguarded-send']).toMatchObject({ status: 'unavailable', reason: 'tool-call-not-captured' });
    expect(byCheck['out-of-order-gate']).toMatchObject({ status: 'unavailable', reason: 'tool-call-not-captured' });
    // The approval that never became a tool span may have failed.
    expect(byCheck['error-output']).toMatchObject({ status: 'unavailable', reason: 'tool-call-not-captured' });

    const nameless = trajectory([
      step({ id: '0000000000000001', kind: 'agent', name: 'invoke_agent' }),
      step({ id: '0000000000000002', parentId: '0000000000000001', args, result: 'ok' }),
    ]);
    const m = Object.fromEntries(buildManifest(input(nameless)).checks.map((c) => [c.check, c]));
    expect(m['malformed-structure']).toMatchObject({ status: 'unavailable', reason: 'tool-name-not-captured' });
    expect(m['fault-passthrough']).toMatchObject({ status: 'unavailable', reason: 'tool-name-not-captured' });
  });

  it('a requested send that never became a tool span: unguarded-send and error-output are unavailable (tool-call-not-captured), never none-observed', () => {
    // The model asked to send an email; no tool span followed (the tool is not traced, or the span was lost).
    const t = trajectory([
      step({ id: '0000000000000001', kind: 'agent', name: 'invoke_agent', result: 'Email sent.' }),
      step({ id: '0000000000000002', parentId: '0000000000000001', kind: 'llm', name: 'chat', requestedToolCalls: [{ id: 'c1', name: 'send_email' }] }),
    ]);
    expect(t.complete).toBe(true);
    const byCheck = Object.fromEntries(buildManifest(input(t)).checks.map((c) => [c.check, c]));
    // The hidden call may have been the send (unguarded), and may have failed.
    for (const check of ['error-output', 'fault-passthrough', 'malformed-structure', 'unguarded-send', 'out-of-order-gate', 'tool-repetition']) {
      expect(byCheck[check], check).toMatchObject({ status: 'unavailable', reason: 'tool-call-not-captured' });
    }
    expect(byCheck['unguarded-send']!.detail).toMatch(/send_email/);
  });

  it('a run holding a failure whose answer cannot be read: fault-passthrough is unavailable, not none-observed', () => {
    const failed = {
      statusCode: 2 as const,
      eventNames: ['exception'],
      error: { source: 'exception' as const, type: 'Timeout', message: 'order service timed out after 30s' },
    };
    const args = { raw: '{"order_id":"42"}', parsed: { order_id: '42' }, digest: 'd2' };
    const noAnswer = trajectory([
      // The agent span carries no output (the capture did not record the answer).
      step({ id: '0000000000000001', kind: 'agent', name: 'invoke_agent' }),
      step({ id: '0000000000000002', parentId: '0000000000000001', toolName: 'lookup_order', args, ...failed }),
    ]);
    const m = Object.fromEntries(buildManifest(input(noAnswer)).checks.map((c) => [c.check, c]));
    expect(m['error-output']!.status).toBe('fired');
    expect(m['fault-passthrough']).toMatchObject({ status: 'unavailable', reason: 'run-outcome-not-captured' });

    const answered = trajectory([
      step({
        id: '0000000000000001',
        kind: 'agent',
        name: 'invoke_agent',
        result: 'I could not look up the order.',
        statusCode: 2,
        error: { source: 'status' },
      }),
      step({ id: '0000000000000002', parentId: '0000000000000001', toolName: 'lookup_order', args, ...failed }),
    ]);
    // A run that failed itself reports no success: nothing about its answer is missing.
    expect(Object.fromEntries(buildManifest(input(answered)).checks.map((c) => [c.check, c]))['fault-passthrough']!.status).toBe('none-observed');
  });

  it('states the provenance issues that made treatment or conditions unavailable', () => {
    const t = sampleTrajectory();
    const m = buildManifest({
      ...input(t),
      provenance: { treatment: null, conditions: [], issues: [{ reason: 'bundle-id-conflict', detail: 'bundle id "b" declared with two definitions' }] },
    });
    expect(m.provenance).toEqual({
      status: 'derived',
      treatment: 'unavailable',
      conditions: 'available',
      issues: [{ reason: 'bundle-id-conflict', detail: 'bundle id "b" declared with two definitions' }],
    });
  });

  it('stays bounded on a huge trajectory without dropping anything unsaid: every finding counted, every window not listed counted by fate and reason', () => {
    const n = 300;
    const steps = [step({ id: '0000000000000001', kind: 'agent', name: 'invoke_agent' })];
    for (let i = 0; i < n; i++) {
      steps.push(
        step({
          id: (i + 2).toString(16).padStart(16, '0'),
          parentId: '0000000000000001',
          toolName: `t${i}`,
          args: { raw: '{}', parsed: {}, digest: `d${i}` },
          statusCode: 2,
        }),
      );
    }
    const t = trajectory(steps);
    const window = (i: number, fate: 'judged' | 'refused' | 'not-sampled', reason?: string) => ({
      window_id: `w1_${i.toString(16).padStart(24, '0')}`,
      kind: 'event' as const,
      anchor: `${'aa'.repeat(16)}/${i.toString(16).padStart(16, '0')}`,
      triggers: ['l0-hit' as const],
      fate,
      ...(reason === undefined ? {} : { reason }),
      finding_ids: [],
    });
    const windows = [
      ...Array.from({ length: 200 }, (_, i) => window(i, 'not-sampled', 'trigger-off')),
      ...Array.from({ length: 4 }, (_, i) => window(1000 + i, 'judged')),
      ...Array.from({ length: 296 }, (_, i) => window(2000 + i, 'refused', 'windows-per-trajectory')),
    ];
    const m = buildManifest(input(t, { judge: 'enabled', windows }));
    expect(AnalysisManifestSchema.parse(m)).toEqual(m);
    const errorOutput = m.checks.find((c) => c.check === 'error-output')!;
    expect(errorOutput).toMatchObject({ status: 'fired', finding_count: n });
    expect(errorOutput.finding_ids).toHaveLength(256);
    expect(m.windows.filter((w) => w.fate === 'judged')).toHaveLength(4);
    expect(m.windows).toHaveLength(4 + 256);
    expect(m.windows_omitted).toEqual([{ fate: 'refused', reason: 'windows-per-trajectory', count: 240 }]);
    expect(Buffer.byteLength(JSON.stringify(m))).toBeLessThan(200 * 1024);
  });
});
