import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIENCES, AudienceError, audienceView, INTERNAL_FIELDS, stripInternal } from '../../src/findings/audience.ts';
import { RECORD_OBSERVATION_NAMES } from '../../src/findings/record-values.ts';
import type { AnalysisManifest } from '../../src/findings/manifest-schema.ts';
import { ObservationSchema, type Finding } from '../../src/findings/schema.ts';
import { L4_CONTEXT, L4_GAP_KIND } from '../../src/judge/walk/layer-questions.ts';
import { deployRun, harness, judgeAll, type Harness } from '../judge/judge-harness.ts';
import { failedToolRun, installLayerCertificate, valuesOf, walkScript } from '../judge/walk/walk-harness.ts';
import { checksConfigSchema } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import { findingsFromChecks } from '../../src/findings/from-checks.ts';
import { NO_PROVENANCE } from '../../src/findings/provenance/provenance.ts';
import { agentRun } from '../windows/builders.ts';
import { judgedFinding, l0Findings, replayedFinding, failedJudgedFinding, sampleManifest } from './audience-fixture.ts';

// Every finding kind the code emits, made by the code that emits it: the trace questions and
// the layered walk are asked through the real DecisionPoints against the scripted Chat
// Completions server (scripted-chat-server.ts), which stands in for the judge's LLM: no LLM
// can run here.

const YES = { letter: 'A', p: 0.97 } as const;
let h: Harness;
let emitted: Finding[] = [];

beforeAll(async () => {
  h = await harness(walkScript({ 'layer.l2-trajectory': YES, [L4_CONTEXT.id]: YES, [L4_GAP_KIND.id]: YES }), {}, { walk: { enabled: true, stopEarly: false } });
  // L4 certified, so its "yes" would act and its verifier is asked: a judged verification too.
  await installLayerCertificate(h.dataDir, h.cfg, 'L4', 'layer', ['turn', 'event']);
  await installLayerCertificate(h.dataDir, h.cfg, 'L4', 'verifier', ['turn', 'event']);
  emitted = (await judgeAll(h.dataDir, h.cfg, [deployRun(), failedToolRun()])).findings;
});
afterAll(async () => {
  await h.server.close();
});

/** A finding's kind: its observation's kind, and a record observation's name. */
const kindOf = (f: Finding): string =>
  f.observation === undefined ? 'none' : f.observation.kind === 'record' ? `record:${f.observation.name}` : f.observation.kind;

/** Two equal lookups: an exact tool repetition finding. */
function repetitionFindings(): Finding[] {
  const t = agentRun(2, () => 'same');
  t.steps[2] = { ...t.steps[2]!, args: t.steps[1]!.args! };
  return findingsFromChecks(t, runChecks(t, checksConfigSchema.parse({})), NO_PROVENANCE);
}

const samples = (): (Finding | AnalysisManifest)[] => [
  ...emitted,
  judgedFinding(),
  replayedFinding(),
  failedJudgedFinding(),
  ...l0Findings(),
  ...repetitionFindings(),
  sampleManifest(),
];

describe('every finding kind through every audience', () => {
  it('the samples hold every observation kind the finding schema declares, every record observation name among them', () => {
    // Read from the code: a new kind or name without a sample here fails.
    const declared = ObservationSchema.options.flatMap((o) => {
      const kind = (o.shape.kind as { value: string }).value;
      return kind === 'record' ? RECORD_OBSERVATION_NAMES.map((n) => `record:${n}`) : [kind];
    });
    const seen = new Set(samples().flatMap((r) => ('record_kind' in r ? [] : [kindOf(r)])));
    for (const kind of declared) expect(seen.has(kind), `no sample of ${kind}`).toBe(true);
    // The walk and the trace questions made theirs themselves.
    expect(new Set(emitted.map(kindOf))).toEqual(new Set(['record:trace-question', 'record:layer-question', 'record:layered-walk', 'record:layer-conflict']));
  });

  it('a key a record observation adds without declaring it is refused by the external strip, whatever its kind', () => {
    for (const name of RECORD_OBSERVATION_NAMES) {
      const f = structuredClone(emitted.find((e) => kindOf(e) === `record:${name}`)!);
      (f.observation as { values: Record<string, unknown> }).values.judge_endpoint = 'https://judge.internal';
      expect(() => stripInternal(f), name).toThrow(AudienceError);
      expect(() => stripInternal(f), name).toThrow(/judge_endpoint/);
    }
  });

  it('the external view of a walk answer leaves out the model ids, ledger key, receipt and certificate, nested under its verification too', () => {
    const layer = emitted.find((f) => kindOf(f) === 'record:layer-question')!;
    const verified = emitted.find((f) => kindOf(f) === 'record:layer-question' && (valuesOf(f).verification as { fate?: string } | null)?.fate === 'judged')!;
    expect(verified).toBeDefined();
    expect(stripInternal(verified).removed).toEqual(
      expect.arrayContaining(['observation.values.verification.served_model', 'observation.values.verification.ledger_key']),
    );
    expect(JSON.stringify(stripInternal(verified).view)).not.toMatch(/served_model|ledger_key|receipt|certificate_id/);
    const { view, removed } = stripInternal(layer);
    expect(removed).toEqual(
      expect.arrayContaining([
        'observation.values.requested_model',
        'observation.values.ledger_key',
        'observation.values.receipt',
        'observation.values.certificate_id',
      ]),
    );
    expect(JSON.stringify(view)).not.toMatch(/requested_model|served_model|ledger_key|receipt|certificate_id/);
    const summary = emitted.find((f) => kindOf(f) === 'record:layered-walk')!;
    expect(stripInternal(summary).removed).toContain('observation.values.cost');
  });

  it('each record has a view for each audience: internal whole, external without any internal field, claim and evidence kept', () => {
    for (const record of samples()) {
      const id = 'record_kind' in record ? record.manifest_id : `${record.analyst_id}/${record.area}`;
      for (const audience of AUDIENCES) {
        const view = audienceView(record, audience);
        if (audience === 'internal') {
          expect(view, id).toBe(record);
          continue;
        }
        for (const path of [...INTERNAL_FIELDS.finding, ...INTERNAL_FIELDS.manifest]) expect(hasPath(view, path), `${id} external has ${path}`).toBe(false);
        if (!('record_kind' in record)) {
          expect((view as Finding).claim, id).toBe(record.claim);
          expect((view as Finding).evidence_refs, id).toEqual(record.evidence_refs);
        }
      }
    }
  });
});

function hasPath(o: unknown, path: string): boolean {
  const [head, ...rest] = path.split('.');
  if (typeof o !== 'object' || o === null || head === undefined) return false;
  if (head === '*') return Array.isArray(o) && o.some((el) => (rest.length === 0 ? true : hasPath(el, rest.join('.'))));
  if (!Object.hasOwn(o, head)) return false;
  return rest.length === 0 ? true : hasPath((o as Record<string, unknown>)[head], rest.join('.'));
}
