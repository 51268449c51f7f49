import { describe, expect, it } from 'vitest';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import { NO_PROVENANCE } from '../../src/findings/provenance/provenance.ts';
import { repetitionFinding } from '../../src/judge/judged-findings.ts';
import type { Step } from '../../src/normalize/step.ts';
import { extractWindows } from '../../src/windows/extract.ts';
import { WindowPolicySchema, windowPolicyDigest } from '../../src/windows/policy.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { at, toolArgs, traj } from './builders.ts';

/**
 * The per-window repetition observation follows the inline rule: presence from any capture,
 * absence only from a complete capture of the window's own tool calls.
 */
const policy = WindowPolicySchema.parse({ config: { eventContextSteps: 1 } });

function statusOfEventWindow(t: Trajectory, anchorIndex: number): unknown {
  const { windows } = extractWindows(t, [{ kind: 'event', anchorIndex, triggers: ['sampled'] }], policy, windowPolicyDigest(policy));
  const finding = repetitionFinding(t, windows[0]!, runChecks(t, defaultChecksConfig), NO_PROVENANCE);
  return (finding.observation as unknown as { values: { status: string } }).values.status;
}

const other = (n: number): Step => at(n, { kind: 'other' });
const search = (n: number, args?: string): Step => at(n, { toolName: 'search', ...(args === undefined ? {} : { args: toolArgs(args) }) });

describe('window-level exact tool repetition', () => {
  it('two calls whose arguments were not captured: unavailable, not "none observed" (repetition elsewhere in the trajectory)', () => {
    // A repeated pair at the start (so the trajectory observes repetition), then, far away, two
    // calls without captured arguments that an event window covers alone.
    const t = traj([search(1, '{"q":1}'), search(2, '{"q":1}'), other(3), other(4), other(5), search(6), search(7), other(8)]);
    expect(runChecks(t, defaultChecksConfig).repetition.status).toBe('observed');
    expect(statusOfEventWindow(t, 5)).toBe('unavailable');
  });

  it('presence from any capture; absence from a complete capture of the window\'s calls', () => {
    const t = traj([search(1, '{"q":1}'), search(2, '{"q":1}'), search(3), other(4), other(5), search(6, '{"q":2}'), search(7, '{"q":3}'), other(8)]);
    expect(statusOfEventWindow(t, 1)).toBe('observed');
    expect(statusOfEventWindow(t, 6)).toBe('none-observed');
    expect(statusOfEventWindow(traj(t.steps, { complete: false, incompleteReasons: ['refused-spans'] }), 6)).toBe('unavailable');
  });

  it('a conflicted span inside the window makes its absence unprovable; one outside does not', () => {
    const t = traj([search(1, '{"q":1}'), other(2), other(3), other(4), search(5, '{"q":2}'), search(6, '{"q":3}'), other(7)]);
    const conflict = (s: Step) => ({ traceId: s.traceId, spanId: s.id, keptDigest: 'a', refusedDigest: 'b' });
    expect(statusOfEventWindow(traj(t.steps, { conflicts: [conflict(t.steps[0]!)] }), 5)).toBe('none-observed');
    expect(statusOfEventWindow(traj(t.steps, { conflicts: [conflict(t.steps[4]!)] }), 5)).toBe('unavailable');
  });
});
