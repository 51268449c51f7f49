import { describe, expect, it } from 'vitest';
import { recordText } from '../../src/cli/finding-text.ts';
import { shortened, terminalSafe } from '../../src/cli/terminal-text.ts';

const finding = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    schema_version: '1.1.0',
    finding_id: `f1_${'a'.repeat(64)}`,
    area: 'tool.repetition',
    severity: 'medium',
    claim: 'web_search called 2 times with identical arguments',
    subject: { trajectory_key: 'conv-7', trace_ids: ['0af7651916cd43dd8448eb211c80319c'], revision: 1 },
    observed_at: '2026-11-30T09:15:02.125000000Z',
    ...over,
  });

describe('tail --format text: one readable line per record', () => {
  it('a finding: time, severity, area, trajectory, claim', () => {
    expect(recordText(finding())).toBe('2026-11-30T09:15:02.125000000Z  medium tool.repetition  conv-7  web_search called 2 times with identical arguments');
  });

  it('names a later revision of the trajectory', () => {
    expect(recordText(finding({ subject: { trajectory_key: 'conv-7', trace_ids: [], revision: 3 } }))).toContain('  conv-7 rev 3  ');
  });

  it('keeps one record on one line and escapes terminal control sequences from telemetry', () => {
    const text = recordText(finding({ claim: 'tool said \u001b[2J\u001b[31mboom\nsecond line\u0007', subject: { trajectory_key: 'k\rx', revision: 1 } }));
    expect(text).not.toMatch(/[\u0000-\u001f]/);
    expect(text).toContain('k\\rx');
    expect(text).toContain('tool said \\x1b[2J\\x1b[31mboom\\nsecond line\\x07');
  });

  it('an analysis manifest: its trajectory, revision, capture and check counts', () => {
    const manifest = JSON.stringify({
      record_kind: 'analysis-manifest',
      subject: { trajectory_key: 'conv-7', trace_ids: [], revision: 2 },
      capture: { complete: false, incomplete_reasons: ['root-not-seen'], closed_by: 'idle-timeout', steps: 4, refused_spans: 0 },
      checks: [{ status: 'fired' }, { status: 'unavailable' }, { status: 'unavailable' }],
    });
    expect(recordText(manifest)).toBe('manifest  conv-7 rev 2  incomplete (root-not-seen), 4 steps; checks: 1 fired, 2 unavailable');
  });

  it('shows a line that is not JSON as it is, escaped, never drops it', () => {
    expect(recordText('{"broken\u001b')).toBe('(not JSON) {"broken\\x1b');
  });

  it('shortens only with the count of what was cut', () => {
    expect(shortened('abcdef', 10)).toBe('abcdef');
    expect(shortened('abcdefghij-klm', 10)).toBe('abcdefghij… (+4 chars)');
    expect(terminalSafe('a\tb\u009bc\u007f')).toBe('a\\tb\\x9bc\\x7f');
  });
});
