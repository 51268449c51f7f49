import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SpanDigests, spanFingerprint } from '../../src/assemble/span-digests.ts';
import type { Step } from '../../src/normalize/step.ts';
import { makeStep } from '../helpers/steps.ts';

describe('span digests of steps that were let go', () => {
  it('find every remembered span by id, with its fingerprint, and no other', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 1, maxLength: 16 }), { maxLength: 60 }),
        fc.nat(),
        (ids, split) => {
          const steps = ids.map((id) => makeStep({ id, result: `r-${id}` }));
          const cut = ids.length === 0 ? 0 : split % (ids.length + 1);
          // Built in two rounds, as revisions let their steps go one after the other.
          const digests = SpanDigests.of(steps.slice(cut), SpanDigests.of(steps.slice(0, cut)));
          expect(digests.size).toBe(ids.length);
          for (const s of steps) expect(digests.fingerprintOf(s.traceId, s.id)).toBe(spanFingerprint(s));
          expect(digests.fingerprintOf(steps[0]?.traceId ?? 'x', 'not-an-id')).toBeUndefined();
        },
      ),
    );
  });

  it('keep the first fingerprint seen for a span id', () => {
    const first = makeStep({ id: 'a', result: 'first' });
    const digests = SpanDigests.of([makeStep({ id: 'a', result: 'second' })], SpanDigests.of([first]));
    expect(digests.size).toBe(1);
    expect(digests.fingerprintOf(first.traceId, 'a')).toBe(spanFingerprint(first));
  });

  it('a fingerprint matches an exact copy and moves with every field an exporter could change', () => {
    const base = makeStep({ id: 'a', parentId: 'p', kind: 'tool', toolName: 't', result: 'x'.repeat(300), input: 'in' });
    expect(spanFingerprint(structuredClone(base))).toBe(spanFingerprint(base));
    const changes: Partial<Step>[] = [
      { name: 'other' },
      { statusCode: 2 },
      { startTimeUnixNano: base.startTimeUnixNano + 1n },
      { endTimeUnixNano: base.endTimeUnixNano + 1n },
      { encodedBytes: base.encodedBytes + 1 },
      { parentId: 'q' },
      { toolName: 'u' },
      { result: 'y' + 'x'.repeat(299) },
      { result: 'x'.repeat(299) + 'y' },
      { result: 'x'.repeat(301) },
      { result: undefined },
      { input: '' },
      { error: { source: 'status', message: 'boom' } },
    ];
    for (const change of changes) {
      const label = JSON.stringify(change, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
      expect(spanFingerprint({ ...base, ...change }), label).not.toBe(spanFingerprint(base));
    }
  });
});

describe('span digests stored by the revision memory', () => {
  it('read back from base64 exactly, and damaged text is refused', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 16 }), { maxLength: 40 }), (ids) => {
        const steps = ids.map((id) => makeStep({ id, result: `r-${id}` }));
        const back = SpanDigests.fromBase64(SpanDigests.of(steps).toBase64())!;
        expect(back.size).toBe(ids.length);
        for (const s of steps) expect(back.fingerprintOf(s.traceId, s.id)).toBe(spanFingerprint(s));
      }),
    );
    const text = SpanDigests.of([makeStep({ id: 'a' }), makeStep({ id: 'b' })]).toBase64();
    expect(SpanDigests.fromBase64(text.slice(0, -8))).toBeUndefined();
    expect(SpanDigests.fromBase64('not base64!')).toBeUndefined();
  });
});
