import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalDigest } from '../../src/core/digest.ts';
import { compositionIdentity, findingId, findingIdWith, identityDocument, normalizeClaim } from '../../src/findings/identity.ts';
import { makeFinding, type FindingDraft } from '../../src/findings/make-finding.ts';
import { makeSnapshot, normalizeSnapshots, type Snapshot } from '../../src/findings/provenance/conditions.ts';
import { normalizeProvenance, type Provenance } from '../../src/findings/provenance/provenance.ts';
import { FindingSchema, type Finding } from '../../src/findings/schema.ts';
import { bundlesArb, isoArb, refArb, snapshotContentArb, snapshotsArb, traceIdArb } from './arbitraries.ts';

const draftArb: fc.Arbitrary<FindingDraft> = fc.record({
  analyst_id: fc.constantFrom('l0', 'tool-repetition'),
  area: fc.constantFrom('error-output', 'tool.repetition'),
  subject: fc.record({
    trajectory_key: fc.string({ minLength: 1, maxLength: 12 }),
    trace_ids: fc.uniqueArray(traceIdArb, { minLength: 1, maxLength: 4 }),
    revision: fc.integer({ min: 1, max: 5 }),
  }),
  claim: fc.string({ minLength: 1, maxLength: 40 }).filter((c) => c.trim() !== ''),
  id_basis: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
  severity: fc.constantFrom('info', 'low', 'medium', 'high'),
  layer: fc.constantFrom('event', 'turn', 'agent', 'run'),
  method: fc.record({ kind: fc.constantFrom('computed', 'judged'), name: fc.constant('m'), version: fc.constant('1') }),
  evidence_refs: fc.array(refArb, { maxLength: 4 }),
  observed_at: isoArb,
  covariates: fc.record({ host_load: fc.option(fc.double({ min: 0, max: 64, noNaN: true }), { nil: null }) }),
});

const provenanceArb: fc.Arbitrary<Provenance> = fc.record({
  treatment: fc.option(bundlesArb, { nil: null }),
  conditions: fc.option(snapshotsArb, { nil: null }),
});

function build(draft: FindingDraft, p: Provenance): Finding {
  const r = makeFinding(draft, p);
  if (!r.ok) throw new Error(`unexpected conflict ${JSON.stringify(r.error)}`);
  return r.value;
}

const reversedInside = (p: Provenance): Provenance => ({
  treatment: p.treatment?.map((b) => ({ ...b, layers: [...b.layers].reverse(), definition_refs: [...b.definition_refs].reverse() })) ?? null,
  conditions: p.conditions?.map((s) => ({ ...s, population: [...s.population].reverse(), evidence_refs: [...s.evidence_refs].reverse() })) ?? null,
});

describe('finding identity', () => {
  it('every built finding parses with FindingSchema and its id recomputes from the record alone', () => {
    fc.assert(
      fc.property(draftArb, provenanceArb, (d, p) => {
        const f = build(d, p);
        expect(FindingSchema.parse(f)).toEqual(f);
        expect(findingId(f)).toBe(f.finding_id);
      }),
    );
  });

  it('reordering bundles, layers, snapshots, trace ids, id basis and evidence refs changes neither id nor bytes', () => {
    fc.assert(
      fc.property(draftArb, provenanceArb, fc.infiniteStream(fc.nat()), (d, p, seeds) => {
        const shuffle = <T>(xs: readonly T[]): T[] => {
          const out = [...xs];
          for (let i = out.length - 1; i > 0; i--) {
            const j = seeds.next().value % (i + 1);
            [out[i], out[j]] = [out[j]!, out[i]!];
          }
          return out;
        };
        const p2 = reversedInside({
          treatment: p.treatment === null ? null : shuffle(p.treatment),
          conditions: p.conditions === null ? null : shuffle(p.conditions),
        });
        const d2: FindingDraft = { ...d, subject: { ...d.subject, trace_ids: shuffle(d.subject.trace_ids) }, id_basis: shuffle(d.id_basis ?? []) };
        const a = build(d, p);
        const b = build(d2, p2);
        expect(b.finding_id).toBe(a.finding_id);
        expect(JSON.stringify(b)).toBe(JSON.stringify(a));
        // Evidence refs are ordered evidence (anchor first): reordering them keeps the id.
        expect(build({ ...d, evidence_refs: shuffle(d.evidence_refs) }, p).finding_id).toBe(a.finding_id);
      }),
    );
  });

  it('covariates do not change the id: host load, observation and start times, evidence, trace ids, revision', () => {
    fc.assert(
      fc.property(
        draftArb,
        provenanceArb,
        isoArb,
        fc.double({ min: 0, max: 99, noNaN: true }),
        fc.array(refArb),
        traceIdArb,
        (d, p, iso, load, refs, extraTrace) => {
          const base = build(d, p);
          const moved: Provenance = {
            treatment: p.treatment,
            conditions:
              p.conditions?.map((s) => {
                const { id: _id, ...content } = s;
                return makeSnapshot({
                  ...content,
                  host_load: load,
                  observed_at: iso,
                  started_at: iso,
                  evidence_refs: refs,
                  population: ['trace:' + extraTrace],
                });
              }) ?? null,
          };
          const changed = build(
            {
              ...d,
              observed_at: iso,
              covariates: { host_load: load, observed_at: iso },
              evidence_refs: refs,
              subject: { ...d.subject, trace_ids: [...d.subject.trace_ids, extraTrace], revision: d.subject.revision + 1 },
            },
            moved,
          );
          expect(changed.finding_id).toBe(base.finding_id);
        },
      ),
    );
  });

  it('a different claim, treatment definition or fixed condition gives a different id', () => {
    fc.assert(
      fc.property(
        draftArb,
        bundlesArb.filter((b) => b.length > 0),
        snapshotContentArb,
        fc.constantFrom('runtime_version', 'lab_commit', 'model_version', 'provider_version', 'seat'),
        (d, bundles, content, field) => {
          const p: Provenance = { treatment: bundles, conditions: [makeSnapshot(content)] };
          const base = build(d, p);
          expect(build({ ...d, claim: d.claim + ' more' }, p).finding_id).not.toBe(base.finding_id);
          const redefined = bundles.map((b, i) => (i === 0 ? { ...b, definition_digest: b.definition_digest + '0' } : b));
          expect(build(d, { ...p, treatment: redefined }).finding_id).not.toBe(base.finding_id);
          const other = makeSnapshot({ ...content, [field]: content[field] === 'x-changed' ? 'y-changed' : 'x-changed' });
          expect(build(d, { ...p, conditions: [other] }).finding_id).not.toBe(base.finding_id);
        },
      ),
    );
  });

  it('steering state is fixed condition: not captured, none, planned, unplanned and unknown differ', () => {
    const d = fc.sample(draftArb, { seed: 1, numRuns: 1 })[0]!;
    const content = fc.sample(snapshotContentArb, { seed: 2, numRuns: 1 })[0]!;
    const ref = { kind: 'event' as const, uri: 'event:x/y/0' };
    const states = [
      null,
      [],
      [{ id: 's', at: null, planned: true, evidence_ref: ref }],
      [{ id: 's', at: null, planned: false, evidence_ref: ref }],
      [{ id: 's', at: null, planned: null, evidence_ref: ref }],
    ];
    const ids = states.map((steers) => build(d, { treatment: null, conditions: [makeSnapshot({ ...content, operator_steers: steers })] }).finding_id);
    expect(new Set(ids).size).toBe(states.length);
  });

  it('absent composition (null) and observed none ([]) stay distinct in record and id', () => {
    fc.assert(
      fc.property(draftArb, (d) => {
        const ids = [
          build(d, { treatment: null, conditions: null }),
          build(d, { treatment: [], conditions: null }),
          build(d, { treatment: null, conditions: [] }),
          build(d, { treatment: [], conditions: [] }),
        ];
        expect(new Set(ids.map((f) => f.finding_id)).size).toBe(4);
        expect(ids[0]!.treatment).toBeNull();
        expect(ids[1]!.treatment).toEqual([]);
      }),
    );
  });

  it('claim whitespace layout is not identity', () => {
    const d = fc.sample(draftArb, { seed: 3, numRuns: 1 })[0]!;
    const p: Provenance = { treatment: null, conditions: null };
    expect(build({ ...d, claim: '  `web_search`   called\n3 times ' }, p).finding_id).toBe(build({ ...d, claim: '`web_search` called 3 times' }, p).finding_id);
    expect(normalizeClaim(' a \t b\n')).toBe('a b');
  });

  it('a snapshot id reused with different content is refused, as a value', () => {
    fc.assert(
      fc.property(snapshotContentArb, fc.double({ min: 0, max: 64, noNaN: true }), draftArb, (content, load, d) => {
        const first = makeSnapshot(content);
        const forged: Snapshot = { ...first, host_load: first.host_load === load ? load + 1 : load };
        const r = normalizeSnapshots([first, forged]);
        expect(r.ok).toBe(false);
        if (!r.ok) expect(r.error).toMatchObject({ kind: 'snapshot-id-conflict', id: first.id });
        const made = makeFinding(d, { treatment: null, conditions: [forged, first] });
        expect(made.ok).toBe(false);
        // The same record twice is one snapshot, not a conflict.
        const same = normalizeProvenance({ treatment: null, conditions: [first, { ...first }] });
        expect(same.ok && same.value.conditions).toEqual([first]);
      }),
    );
  });

  it('a bundle id reused with another definition is refused', () => {
    fc.assert(
      fc.property(
        bundlesArb.filter((b) => b.length > 0),
        (bundles) => {
          const b = bundles[0]!;
          const r = normalizeProvenance({ treatment: [...bundles, { ...b, definition_digest: b.definition_digest + 'f' }], conditions: null });
          expect(r.ok).toBe(false);
          if (!r.ok) expect(r.error).toMatchObject({ kind: 'bundle-id-conflict', id: b.id });
        },
      ),
    );
  });
});

describe('findingIdWith writes the canonical identity document directly', () => {
  it('gives exactly the digest of canonicalJson(identityDocument(...)) for any fields and provenance', () => {
    fc.assert(
      fc.property(draftArb, provenanceArb, (draft, p) => {
        const composition = compositionIdentity(p.treatment, p.conditions);
        const expected = `f1_${canonicalDigest(identityDocument(draft, composition))}`;
        expect(findingIdWith(draft, composition)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });
});
