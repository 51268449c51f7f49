import { describe, expect, it } from 'vitest';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import { NO_PROVENANCE } from '../../src/findings/provenance/provenance.ts';
import { repetitionFinding } from '../../src/judge/judged-findings.ts';
import type { Step } from '../../src/normalize/step.ts';
import { extractWindows } from '../../src/windows/extract.ts';
import { gapLimitations } from '../../src/windows/window-gaps.ts';
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

  it("presence from any capture; absence from a complete capture of the window's calls", () => {
    const t = traj([search(1, '{"q":1}'), search(2, '{"q":1}'), search(3), other(4), other(5), search(6, '{"q":2}'), search(7, '{"q":3}'), other(8)]);
    expect(statusOfEventWindow(t, 1)).toBe('observed');
    expect(statusOfEventWindow(t, 6)).toBe('none-observed');
    expect(statusOfEventWindow(traj(t.steps, { complete: false, incompleteReasons: ['refused-spans'] }), 6)).toBe('unavailable');
  });

  it('a requested call missing just before the window: unavailable, and the window tells the judge which call is missing', () => {
    // The model asked for delete_file (never captured as a tool span), then for send_email, which ran.
    const llm = (n: number, name: string): Step => at(n, { kind: 'llm', name: 'chat', requestedToolCalls: [{ name }] });
    const send = at(4, { toolName: 'send_email', args: toolArgs('{"to":"a@b.c"}'), result: 'sent' });
    const t = traj([search(1, '{"q":1}'), llm(2, 'delete_file'), llm(3, 'send_email'), send, other(5)]);
    expect(runChecks(t, defaultChecksConfig).repetition).toEqual({ status: 'unavailable', reasons: ['tool-call-not-captured'] });
    // The event window around the send (one step each side) holds the second request and the send, not the first request.
    const { windows } = extractWindows(t, [{ kind: 'event', anchorIndex: 3, triggers: ['outbound'] }], policy, windowPolicyDigest(policy));
    expect(windows[0]!.events).toHaveLength(3);
    expect(windows[0]!.limitations).toContain('tool-call-not-captured:delete_file');
    expect(statusOfEventWindow(t, 3)).toBe('unavailable');
  });

  it('a conflicted span inside the window makes its absence unprovable; one outside does not', () => {
    const t = traj([search(1, '{"q":1}'), other(2), other(3), other(4), search(5, '{"q":2}'), search(6, '{"q":3}'), other(7)]);
    const conflict = (s: Step) => ({ traceId: s.traceId, spanId: s.id, keptDigest: 'a', refusedDigest: 'b' });
    expect(statusOfEventWindow(traj(t.steps, { conflicts: [conflict(t.steps[0]!)] }), 5)).toBe('none-observed');
    expect(statusOfEventWindow(traj(t.steps, { conflicts: [conflict(t.steps[4]!)] }), 5)).toBe('unavailable');
  });
});

describe('the capture gaps a window inherits', () => {
  const llm = (n: number, name?: string): Step => at(n, { kind: 'llm', name: 'chat', requestedToolCalls: [name === undefined ? {} : { name }] });

  it('a request missing after the window ended does not touch it; one before it does, and the repetition finding names it', () => {
    const t = traj([search(1, '{"q":1}'), search(2, '{"q":2}'), other(3), other(4), other(5), llm(6, 'delete_file'), other(7)]);
    // The window around step 2 (index 1) ended before the request at 6 was made.
    expect(statusOfEventWindow(t, 1)).toBe('none-observed');
    const { windows } = extractWindows(t, [{ kind: 'event', anchorIndex: 1, triggers: ['sampled'] }], policy, windowPolicyDigest(policy));
    expect(windows[0]!.limitations.filter((l) => l.startsWith('tool-call'))).toEqual([]);
    // Moved before the window, the request touches it.
    const before = traj([llm(0, 'delete_file'), search(1, '{"q":1}'), search(2, '{"q":2}'), other(3)]);
    const built = extractWindows(before, [{ kind: 'event', anchorIndex: 2, triggers: ['sampled'] }], policy, windowPolicyDigest(policy)).windows[0]!;
    expect(built.limitations.filter((l) => l.startsWith('tool-call'))).toEqual(['tool-call-not-captured:delete_file']);
    const values = (
      repetitionFinding(before, built, runChecks(before, defaultChecksConfig), NO_PROVENANCE).observation as unknown as { values: Record<string, unknown> }
    ).values;
    expect(values).toMatchObject({ status: 'unavailable', reasons: ['tool-call-not-captured'] });
  });

  it('a request that named no tool is told as an unnamed tool', () => {
    const t = traj([llm(0), search(1, '{"q":1}'), search(2, '{"q":2}')]);
    const built = extractWindows(t, [{ kind: 'event', anchorIndex: 2, triggers: ['sampled'] }], policy, windowPolicyDigest(policy)).windows[0]!;
    expect(built.limitations.filter((l) => l.startsWith('tool-call'))).toEqual(['tool-call-not-captured:unnamed-tool']);
  });

  it('names clock skew, and each step gap by the event that shows it', () => {
    const eventOf = (id: string) => ({ s1: 'e1', s2: 'e2' })[id];
    expect(
      gapLimitations(
        [
          { reason: 'tool-call-not-captured', spanIds: ['l1'], toolNames: ['send_email', 'delete_file'] },
          { reason: 'unread-convention', spanIds: ['s2', 'outside'], conventions: ['mlflow.spanType=TOOL'] },
          { reason: 'clock-skew', spanIds: ['s1'], skewNs: '3600000000000' },
        ],
        eventOf,
      ),
    ).toEqual(['tool-call-not-captured:send_email', 'tool-call-not-captured:delete_file', 'unread-convention:e2', 'clock-skew']);
  });

  it('an unread-convention step inside the window makes its absence unprovable; one outside does not', () => {
    const unread = at(6, { kind: 'other', unreadConvention: 'mlflow.spanType=TOOL' });
    const t = traj([search(1, '{"q":1}'), search(2, '{"q":2}'), other(3), other(4), other(5), unread, other(7)]);
    expect(statusOfEventWindow(t, 1)).toBe('none-observed');
    expect(statusOfEventWindow(t, 5)).toBe('unavailable');
  });
});
