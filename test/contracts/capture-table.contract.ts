import { describe, expect, it } from 'vitest';
import { createAnalyzer } from '../../src/analyze.ts';
import { CAPTURE_GAP_REASONS, captureGaps, type CaptureGap, type CaptureGapReason } from '../../src/assemble/capture-gaps.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { gapHides, tableSilence } from '../../src/checks/capture-table.ts';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import type { CaptureTableRow } from '../../src/checks/registry.ts';
import { ConfigSchema } from '../../src/config-schema.ts';
import { buildManifest } from '../../src/findings/manifest.ts';
import { MANIFEST_CHECKS } from '../../src/findings/manifest-schema.ts';
import type { Step } from '../../src/normalize/step.ts';
import { agent, step, tool, trajectory } from '../checks/builders.ts';

const analyze = createAnalyzer(ConfigSchema.parse({}));

/**
 * A complete capture every check reads whole: an approval, then the send it covers, every
 * request answered, every tool call's name, arguments and result captured, the run's answer read.
 */
function cleanSteps(): Step[] {
  return [
    agent('Done: the email was sent.', { id: 'a000000000000001', at: 0, end: 30 }),
    step('llm', {
      id: 'a000000000000002',
      parentId: 'a000000000000001',
      at: 1,
      end: 2,
      name: 'chat',
      requestedToolCalls: [{ id: 'c1', name: 'approve_send' }],
    }),
    tool('approve_send', { id: 'a000000000000003', parentId: 'a000000000000001', at: 2, end: 3, toolCallId: 'c1', args: '{"draft": 1}', result: 'approved' }),
    tool('send_email', { id: 'a000000000000004', parentId: 'a000000000000001', at: 4, end: 5, args: '{"to": "a@b.c"}', result: 'sent' }),
  ];
}

const parent = { parentId: 'a000000000000001' };

/**
 * For each gap kind with a producer in `captureGaps`: the clean capture plus one step that
 * makes exactly that gap. A kind no producer makes yet is listed in `NOT_YET_PRODUCED` instead,
 * with a fixture that ought to make it; the table's decisions for it are checked on the rows.
 */
export const ONLY_GAP: Partial<Record<CaptureGapReason, () => Trajectory>> = {
  'tool-name-not-captured': () =>
    trajectory([...cleanSteps(), step('tool', { id: 'a000000000000005', ...parent, at: 6, name: 'execute_tool', args: '{"q": 1}', result: 'ok' })]),
  'tool-call-not-captured': () =>
    trajectory([
      ...cleanSteps(),
      step('llm', { id: 'a000000000000005', ...parent, at: 6, name: 'chat', requestedToolCalls: [{ id: 'c2', name: 'web_search' }] }),
    ]),
  'tool-args-not-captured': () => trajectory([...cleanSteps(), tool('web_search', { id: 'a000000000000005', ...parent, at: 6, result: 'ok' })]),
  'tool-result-not-captured': () => trajectory([...cleanSteps(), tool('web_search', { id: 'a000000000000005', ...parent, at: 6, args: '{"q": 1}' })]),
  'unread-convention': () =>
    trajectory([...cleanSteps(), step('other', { id: 'a000000000000005', ...parent, at: 6, name: 'mlflow tool', unreadConvention: 'mlflow.spanType=TOOL' })]),
  // A child of the send that starts a second before the send did.
  'clock-skew': () =>
    trajectory([...cleanSteps(), tool('web_search', { id: 'a000000000000005', parentId: 'a000000000000004', at: 3, end: 4, args: '{"q": 1}', result: 'ok' })]),
};

/** Kinds another part will produce, each with the fixture that should make it then (none today). */
export const NOT_YET_PRODUCED: Partial<Record<CaptureGapReason, () => Trajectory>> = {};

function manifestOf(t: Trajectory) {
  const analysis = analyze(t);
  return buildManifest({
    trajectory: t,
    checks: analysis.checks,
    findings: analysis.findings,
    provenance: analysis.provenance,
    judge: 'disabled',
    windows: [],
  });
}

const gapOf = (reason: CaptureGapReason): CaptureGap => ({ reason, spanIds: ['a000000000000005'] });

/**
 * The capture table (`CAPTURE_TABLE`): every check the manifest accounts for has a decision
 * for every capture gap kind, and the manifest follows it: a complete capture with only that
 * gap never says `none-observed` for a check whose row lists the gap (it says `unavailable`,
 * naming the gap), and leaves a check whose row does not list it unaffected.
 */
export function runCaptureTableContract(table: readonly CaptureTableRow[]): void {
  describe('the capture table', () => {
    it('has one row per check of the manifest, in its order, and a decision with a reason for every gap kind in each', () => {
      expect(table.map((r) => r.check)).toEqual([...MANIFEST_CHECKS]);
      for (const row of table) {
        expect(Object.keys(row.hiddenBy).sort(), row.check).toEqual([...CAPTURE_GAP_REASONS].sort());
        for (const kind of CAPTURE_GAP_REASONS) {
          const decision = row.hiddenBy[kind];
          expect(typeof decision.hides, `${row.check} × ${kind}`).toBe('boolean');
          expect(decision.why.length, `${row.check} × ${kind}: why`).toBeGreaterThan(10);
        }
      }
    });

    it('the clean capture makes no gap and every check says none-observed', () => {
      const t = trajectory(cleanSteps());
      expect(captureGaps(t.steps)).toEqual([]);
      for (const c of manifestOf(t).checks) expect(c.status, c.check).toBe('none-observed');
    });

    it('every gap kind has a fixture that makes exactly it, or is listed as not yet produced (and indeed is not)', () => {
      for (const kind of CAPTURE_GAP_REASONS) {
        const make = ONLY_GAP[kind] ?? NOT_YET_PRODUCED[kind];
        expect(make, kind).toBeDefined();
        const reasons = captureGaps(make!().steps).map((g) => g.reason);
        // A producer that now makes a listed kind fails here: move its fixture to ONLY_GAP.
        expect(reasons, kind).toEqual(ONLY_GAP[kind] === undefined ? [] : [kind]);
      }
    });

    it("a conditional cell silences when its condition holds of the gap's spans and not otherwise: a missing result on a gate, not on a search", () => {
      const withResultless = (name: string) => trajectory([...cleanSteps(), tool(name, { id: 'a000000000000005', ...parent, at: 6, args: '{"q": 1}' })]);
      const gate = manifestOf(withResultless('review_draft')).checks.find((c) => c.check === 'unguarded-send')!;
      const search = manifestOf(withResultless('web_search')).checks.find((c) => c.check === 'unguarded-send')!;
      expect(gate).toMatchObject({ status: 'unavailable', reason: 'tool-result-not-captured' });
      expect(search.status).toBe('none-observed');
      const conditional = table.flatMap((row) => CAPTURE_GAP_REASONS.filter((k) => row.hiddenBy[k].onlyIf !== undefined).map((k) => `${row.check} × ${k}`));
      expect(conditional.length).toBeGreaterThan(0);
    });

    for (const kind of CAPTURE_GAP_REASONS) {
      it(`row by row, a ${kind} gap silences exactly the checks whose row lists it (and whose condition holds), with the row's reason`, () => {
        const t = (ONLY_GAP[kind] ?? NOT_YET_PRODUCED[kind])!();
        for (const row of table) {
          const silence = tableSilence(row.hiddenBy, [gapOf(kind)], t, defaultChecksConfig);
          if (gapHides(row.hiddenBy[kind], gapOf(kind), t, defaultChecksConfig))
            expect(silence, `${row.check} × ${kind}`).toMatchObject({ reason: kind, detail: expect.stringContaining(row.hiddenBy[kind].why) });
          else expect(silence, `${row.check} × ${kind}`).toBeUndefined();
        }
      });

      const make = ONLY_GAP[kind];
      if (make === undefined) continue;
      it(`a complete capture with only a ${kind} gap: unavailable (${kind}) for every check whose row lists it (its condition holding), none-observed for the others`, () => {
        const t = make();
        const [gap] = captureGaps(t.steps);
        const byCheck = new Map(manifestOf(t).checks.map((c) => [c.check, c]));
        for (const row of table) {
          const entry = byCheck.get(row.check as (typeof MANIFEST_CHECKS)[number])!;
          if (gapHides(row.hiddenBy[kind], gap!, t, defaultChecksConfig))
            expect(entry, `${row.check} × ${kind}`).toMatchObject({ status: 'unavailable', reason: kind });
          else expect(entry.status, `${row.check} × ${kind}`).toBe('none-observed');
        }
      });
    }
  });
}
