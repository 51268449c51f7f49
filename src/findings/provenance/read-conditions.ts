import type { Trajectory } from '../../assemble/trajectory.ts';
import type { Attributes } from '../../ingest/span.ts';
import type { Step } from '../../normalize/step.ts';
import { canonicalJson } from '../../core/canonical-json.ts';
import { eventUri, spanRef, type EvidenceRef } from '../../core/evidence-ref.ts';
import { isoFromUnixNano } from '../../core/time.ts';
import type { ConditionsConfig } from './config.ts';
import { makeSnapshot, type Snapshot, type SnapshotContent, type Steer } from './conditions.ts';
import { inStepOrder, rootStep } from '../step-order.ts';
import { numericValue, readAttribute, scalarText } from './read-attribute.ts';

/**
 * A reading over several steps: every distinct value, sorted and joined with `,` (two models
 * in one process are both the condition), with one span ref per distinct value. `null` when
 * no step carries it.
 */
function reading(steps: readonly Step[], valueIn: (s: Step) => string | undefined, refs: EvidenceRef[]): string | null {
  const firstSupplier = new Map<string, Step>();
  for (const s of steps) {
    const v = valueIn(s);
    if (v !== undefined && !firstSupplier.has(v)) firstSupplier.set(v, s);
  }
  if (firstSupplier.size === 0) return null;
  for (const s of firstSupplier.values()) refs.push(spanRef(s.traceId, s.id));
  return [...firstSupplier.keys()].sort().join(',');
}

function providerOf(s: Step, cfg: ConditionsConfig): string | undefined {
  const name = scalarText(readAttribute(s, cfg.providerNameAttributes));
  const version = scalarText(readAttribute(s, cfg.providerVersionAttributes));
  if (name === undefined && version === undefined) return undefined;
  return [name, version].filter((x) => x !== undefined).join('/');
}

function steersOf(steps: readonly Step[], cfg: ConditionsConfig): Steer[] | null {
  if (!cfg.steers.captured) return null;
  const names = new Set(cfg.steers.eventNames);
  const steers: Steer[] = [];
  for (const s of steps) {
    s.eventNames.forEach((name, i) => {
      if (!names.has(name)) return;
      // A Step keeps event names only, so time and plannedness are not readable: null, not guessed.
      steers.push({
        id: `steer:${s.traceId}/${s.id}/${i}`,
        at: null,
        planned: null,
        evidence_ref: { kind: 'event', uri: eventUri(s.traceId, s.id, i), excerpt: name },
      });
    });
  }
  return steers;
}

/**
 * One snapshot per distinct resource (one emitting process), read from execution evidence
 * only. `null` when conditions are not captured; `[]` only for a trajectory with no steps.
 */
export function readConditions(t: Trajectory, cfg: ConditionsConfig): Snapshot[] | null {
  return readConditionContents(t, cfg)?.map(makeSnapshot) ?? null;
}

/**
 * What `readConditions` reads, before each snapshot is normalized and digested into its id:
 * enough for the fixed conditions, which is all a comparison of identities needs.
 */
export function readConditionContents(t: Trajectory, cfg: ConditionsConfig): SnapshotContent[] | null {
  if (!cfg.enabled) return null;
  const keyOf = new Map<Attributes, string>();
  const groups = new Map<string, Step[]>();
  const ordered = inStepOrder(t.steps);
  for (const s of ordered) {
    let key = keyOf.get(s.resource);
    if (key === undefined) {
      key = canonicalJson(s.resource);
      keyOf.set(s.resource, key);
    }
    const g = groups.get(key);
    if (g === undefined) groups.set(key, [s]);
    else g.push(s);
  }
  const root = rootStep(ordered);
  const contents: SnapshotContent[] = [];
  for (const steps of groups.values()) {
    const refs: EvidenceRef[] = [];
    const text = (names: readonly string[]) => (s: Step) => scalarText(readAttribute(s, names));
    let hostLoad: number | null = null;
    for (const s of steps) {
      const load = numericValue(readAttribute(s, cfg.hostLoadAttributes));
      if (load !== undefined) {
        hostLoad = load;
        refs.push(spanRef(s.traceId, s.id));
        break;
      }
    }
    let lastEnd = steps[0]!.endTimeUnixNano;
    for (const s of steps) if (s.endTimeUnixNano > lastEnd) lastEnd = s.endTimeUnixNano;
    if (root !== undefined) refs.push(spanRef(root.traceId, root.id));
    contents.push({
      population: [...new Set(steps.map((s) => s.traceId))].map((id) => `trace:${id}`),
      observed_at: isoFromUnixNano(lastEnd),
      runtime_version: reading(steps, text(cfg.runtimeVersionAttributes), refs),
      lab_commit: reading(steps, text(cfg.labCommitAttributes), refs),
      model_version: reading(steps, text(cfg.modelVersionAttributes), refs),
      provider_version: reading(steps, (s) => providerOf(s, cfg), refs),
      seat: reading(steps, text(cfg.seatAttributes), refs),
      host_load: hostLoad,
      started_at: root === undefined ? null : isoFromUnixNano(root.startTimeUnixNano),
      operator_steers: steersOf(steps, cfg),
      evidence_refs: refs,
    });
  }
  return contents;
}
