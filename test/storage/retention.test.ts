import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planRetention } from '../../src/storage/retention.ts';

interface S {
  id: number;
  sizeBytes: number;
  modifiedMs: number;
  needed: boolean;
}

const segmentsArb = fc.array(fc.record({ sizeBytes: fc.integer({ min: 0, max: 1000 }), ageMs: fc.integer({ min: 0, max: 10_000 }), needed: fc.boolean() }), {
  minLength: 1,
  maxLength: 12,
});
const NOW = 1_000_000;

function build(rows: { sizeBytes: number; ageMs: number; needed: boolean }[]): S[] {
  // Oldest first: ages decrease along the list.
  const ages = rows.map((r) => r.ageMs).sort((a, b) => b - a);
  return rows.map((r, id) => ({ id, sizeBytes: r.sizeBytes, modifiedMs: NOW - ages[id]!, needed: r.needed }));
}

describe('planRetention', () => {
  it('never deletes the active segment or one the owner needs; under the bound unless the needed data alone fills it', () => {
    fc.assert(
      fc.property(segmentsArb, fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 0, max: 500 }), (rows, maxBytes, incoming) => {
        const segments = build(rows);
        const plan = planRetention(segments, { maxBytes }, (s) => s.needed, incoming, NOW);
        const removed = new Set(plan.remove.map((s) => s.id));
        expect(removed.has(segments.length - 1)).toBe(false);
        for (const s of plan.remove) expect(s.needed).toBe(false);
        const kept = segments.filter((s) => !removed.has(s.id));
        const keptBytes = kept.reduce((a, s) => a + s.sizeBytes, incoming);
        expect(plan.totalBytes).toBe(keptBytes);
        // Held: what may not go (the active one, the needed ones).
        const held = segments.filter((s, i) => i === segments.length - 1 || s.needed).reduce((a, s) => a + s.sizeBytes, incoming);
        expect(plan.full).toBe(keptBytes > maxBytes);
        if (keptBytes > maxBytes) expect(keptBytes).toBe(held);
      }),
    );
  });

  it('deletes oldest first, and only as much as the bound asks', () => {
    fc.assert(
      fc.property(segmentsArb, fc.integer({ min: 1, max: 5000 }), (rows, maxBytes) => {
        const segments = build(rows.map((r) => ({ ...r, needed: false })));
        const plan = planRetention(segments, { maxBytes }, () => false, 0, NOW);
        // A prefix of the closed segments.
        expect(plan.remove.map((s) => s.id)).toEqual(plan.remove.map((_, i) => i));
        // Keeping the newest removed one would have broken the bound.
        const last = plan.remove.at(-1);
        if (last !== undefined) expect(plan.totalBytes + last.sizeBytes).toBeGreaterThan(maxBytes);
      }),
    );
  });

  it('deletes closed segments older than maxAgeHours even under the byte bound, never a needed one', () => {
    const hour = 3_600_000;
    const segments = [
      { id: 0, sizeBytes: 10, modifiedMs: NOW - 5 * hour, needed: true },
      { id: 1, sizeBytes: 10, modifiedMs: NOW - 3 * hour, needed: false },
      { id: 2, sizeBytes: 10, modifiedMs: NOW - 1 * hour, needed: false },
      { id: 3, sizeBytes: 10, modifiedMs: NOW - 9 * hour, needed: false },
    ];
    const plan = planRetention(segments, { maxBytes: 1 << 30, maxAgeHours: 2 }, (s) => s.needed, 0, NOW);
    expect(plan.remove.map((s) => s.id)).toEqual([1]);
  });
});
