import { z } from 'zod';
import type { Audience } from '../findings/audience.ts';
import { AnalysisManifestSchema, MANIFEST_RECORD_KIND } from '../findings/manifest-schema.ts';
import { FindingSchema, MethodSchema, SubjectSchema } from '../findings/schema.ts';
import type { Checker } from './checker.ts';
import type { RememberedLine, StreamRecord, TrajectoryLine } from './records.ts';
import { type RecordLocation, ViolationList } from './violation.ts';

/** The part of a trajectory line every other invariant reads; the rest of the line is not verify's to judge. */
const TrajectoryLineSchema = z.looseObject({
  key: z.string().min(1),
  traceIds: z.array(z.string()).min(1),
  revision: z.number().int().min(1),
  complete: z.boolean(),
  incompleteReasons: z.array(z.string()),
  closedBy: z.string().optional(),
  refusedSpans: z.number().int().min(0).optional(),
  conflicts: z.array(z.unknown()).optional(),
  captureGaps: z.array(z.looseObject({ reason: z.string(), spanIds: z.array(z.string()) })).optional(),
  steps: z.array(
    z.looseObject({ id: z.string(), traceId: z.string(), kind: z.string().optional(), toolName: z.string().optional(), agentName: z.string().optional() }),
  ),
});

const RememberedLineSchema = z.looseObject({ n: z.number().int().min(0), key: z.string().min(1), revision: z.number().int().min(1) });

/**
 * An external view lacks the internal fields (some required internally), so only what the
 * external schema keeps is checked: identity, subject, method, claim.
 */
const ExternalFindingSchema = z.looseObject({
  finding_id: z.string().regex(/^f1_[0-9a-f]{64}$/),
  analyst_id: z.string().min(1),
  area: z.string().min(1),
  subject: SubjectSchema,
  claim: z.string(),
  method: MethodSchema,
  treatment: z.array(z.unknown()).nullable(),
  conditions: z.array(z.unknown()).nullable(),
});

type Parsed<T> = { ok: true; value: T } | { ok: false; why: string };

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): Parsed<T> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0]!;
  return { ok: false, why: `not a valid ${what}: ${issue.path.join('.') || '(record)'}: ${issue.message}` };
}

function json(text: string): Parsed<unknown> {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, why: `not JSON: ${(err as Error).message}` };
  }
}

/**
 * `record-schema`: every line verify reads is JSON of its published shape — a finding or
 * manifest of the findings schemas (`trajwatch schema record`), a trajectory line, a revision
 * memory line. A line that is not is reported here and left out of the other invariants.
 */
export class RecordSchema implements Checker {
  readonly id = 'record-schema' as const;
  readonly violations = new ViolationList(this.id);
  checked = 0;

  trajectoryLine(text: string, at: RecordLocation): TrajectoryLine | undefined {
    return this.#take(at, () => {
      const v = json(text);
      return v.ok ? parse(TrajectoryLineSchema, v.value, 'trajectory line') : v;
    });
  }

  rememberedLine(value: unknown, at: RecordLocation): RememberedLine | undefined {
    return this.#take(at, () => parse(RememberedLineSchema, value, 'revision memory line'));
  }

  /** A line of a findings stream: a finding, or a manifest (it carries `record_kind`). */
  streamLine(text: string, at: RecordLocation, audience: Audience): StreamRecord | undefined {
    return this.#take(at, (): Parsed<StreamRecord> => {
      const v = json(text);
      if (!v.ok) return v;
      const value = v.value as { record_kind?: unknown };
      if (typeof value === 'object' && value !== null && 'record_kind' in value) {
        if (value.record_kind !== MANIFEST_RECORD_KIND) return { ok: false, why: `record_kind "${String(value.record_kind)}" is no record kind` };
        const m = parse(AnalysisManifestSchema, value, 'analysis manifest');
        return m.ok ? { ok: true, value: { kind: 'manifest', record: m.value, at } } : m;
      }
      const schema = (audience === 'internal' ? FindingSchema : ExternalFindingSchema) as typeof FindingSchema;
      const f = parse(schema, value, `finding (${audience} view)`);
      return f.ok ? { ok: true, value: { kind: 'finding', record: f.value, at } } : f;
    });
  }

  #take<T>(at: RecordLocation, read: () => Parsed<T>): T | undefined {
    this.checked++;
    const parsed = read();
    if (parsed.ok) return parsed.value;
    this.violations.add(at, parsed.why);
    return undefined;
  }
}
