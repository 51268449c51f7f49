/**
 * Which root attributes key a trajectory: only the documented session keys
 * (`SESSION_ID_KEYS`, listed in docs/clients.md "Session identity"). A trace whose every span,
 * root included, names a grouping id under any other key is keyed by its trace id: an
 * undocumented key never joins traces silently, and the doc says which keys are not read.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Assembler } from '../../src/assemble/assembler.ts';
import { AssemblerLimitsSchema } from '../../src/assemble/limits.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import type { Attributes } from '../../src/ingest/span.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import { SESSION_ID_KEYS } from '../../src/normalize/session.ts';
import { makeSpan } from './make-span.ts';

const TRACE_A = 'a1'.repeat(16);
const TRACE_B = 'b2'.repeat(16);

/** Grouping ids real instrumentations write that are not session keys trajwatch reads. */
const UNDOCUMENTED = ['group_id', 'thread_id', 'conversation_id', 'conversation.id', 'session_id', 'mlflow.trace.session', 'langsmith.metadata.thread_id'];

/** Two traces, root and child each, every span naming `attributes`; the closed trajectory keys. */
function keysOf(attributes: Attributes): string[] {
  const closed: Trajectory[] = [];
  const assembler = new Assembler(AssemblerLimitsSchema.parse({ quietPeriodMs: 1_000, idleTimeoutMs: 30_000 }), (t) => closed.push(t));
  for (const traceId of [TRACE_A, TRACE_B]) {
    const root = makeSpan({ traceId, spanId: `${traceId.slice(0, 2)}00000000000001`, parentSpanId: '', name: 'conversation', attributes });
    const child = makeSpan({ traceId, spanId: `${traceId.slice(0, 2)}00000000000002`, parentSpanId: root.spanId, name: 'step', attributes });
    assembler.add(normalizeSpan(child), 0);
    assembler.add(normalizeSpan(root), 0);
  }
  assembler.advance(10_000);
  return closed.map((t) => t.key).sort();
}

describe('grouping ids on the root', () => {
  it.each(UNDOCUMENTED.map((key) => [key]))('%s on every span keys nothing: each trace is its own trajectory, keyed by its trace id', (key) => {
    expect(keysOf({ [key]: 'conv-1' })).toEqual([TRACE_A, TRACE_B]);
  });

  it('a documented key on every span joins both traces under it', () => {
    for (const key of SESSION_ID_KEYS) expect(keysOf({ [key]: 'conv-1' }), key).toEqual(['conv-1']);
  });

  it('docs/clients.md names every session key, and the grouping ids that are not read', () => {
    const doc = readFileSync(new URL('../../docs/clients.md', import.meta.url), 'utf8');
    const start = doc.indexOf('**Session identity**');
    const section = doc.slice(start, doc.indexOf('\n\n', doc.indexOf('- Two spans of one trace naming different sessions', start)));
    expect(start).toBeGreaterThan(-1);
    // A key is named in full, or as a suffix after its prefix was named (`.session_id`).
    for (const key of SESSION_ID_KEYS) {
      const named = section.includes(`\`${key}\``) || section.includes(`\`.${key.split('.').at(-1)}\``);
      expect(named, key).toBe(true);
    }
    const unread = section.slice(section.indexOf('**Only these keys key a trajectory.**'));
    expect(unread.startsWith('**Only these keys key a trajectory.**'), 'the section says which keys do not key').toBe(true);
    for (const key of UNDOCUMENTED) expect(unread, key).toContain(`\`${key}\``);
  });
});
