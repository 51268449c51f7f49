import type { Trajectory } from '../assemble/trajectory.ts';
import type { CheckResults } from '../checks/check-result.ts';
import { L0_CHECKS } from '../checks/registry.ts';
import { sha256Hex } from '../core/digest.ts';
import {
  MANIFEST_MAX_FINDING_IDS,
  MANIFEST_MAX_UNJUDGED_WINDOWS,
  MANIFEST_RECORD_KIND,
  MANIFEST_SCHEMA_VERSION,
  type AnalysisManifest,
  type CheckStatus,
  type WindowFate,
} from './manifest-schema.ts';
import { type CaptureNote, captureNotes } from './capture-notes.ts';
import type { DerivedProvenance } from './provenance/derive.ts';
import type { Finding } from './schema.ts';
import { isoFromUnixNano } from '../core/time.ts';
import { rememberRecordJson } from './record-json.ts';

/** Everything the manifest of one closed trajectory revision is built from. */
export interface ManifestInput {
  trajectory: Trajectory;
  checks: CheckResults;
  /** The inline findings made from `checks`. */
  findings: readonly Finding[];
  /** The findings' provenance; undefined when none was derived (no finding carried it). */
  provenance: DerivedProvenance | undefined;
  judge: 'enabled' | 'disabled';
  /** Every window's fate, in the order the policy asked for them. */
  windows: readonly WindowFate[];
}

/**
 * The analysis manifest of one closed trajectory revision: each check's status, each window's
 * fate, the provenance that came out null and why. Pure: the same input gives byte-identical
 * output, and `manifest_id` digests the whole content, so a replay that came to the same
 * analysis dedupes and one that came to another (a window judged that was deferred) does not.
 *
 * A check that did not fire is `none-observed` only from a complete capture; from an
 * incomplete one it is `unavailable` with reason `incomplete-capture`, because an incomplete
 * capture can show that something happened, never that it did not.
 */
export function buildManifest(input: ManifestInput): AnalysisManifest {
  const t = input.trajectory;
  const content: Omit<AnalysisManifest, 'manifest_id' | 'record_kind' | 'schema_version'> = {
    subject: { trajectory_key: t.key, trace_ids: [...t.traceIds].sort(), revision: t.revision },
    capture: {
      complete: t.complete,
      incomplete_reasons: [...t.incompleteReasons].sort(),
      closed_by: t.closedBy,
      steps: t.steps.length,
      refused_spans: t.refusedSpans,
      ...notesOf(t),
    },
    checks: checkStatuses(t, input.checks, input.findings),
    provenance:
      input.provenance === undefined
        ? { status: 'not-derived', reason: 'no-finding' }
        : {
            status: 'derived',
            treatment: input.provenance.treatment === null ? 'unavailable' : 'available',
            conditions: input.provenance.conditions === null ? 'unavailable' : 'available',
            issues: input.provenance.issues.map((i) => ({ reason: i.reason, detail: i.detail })),
          },
    judge: input.judge,
    ...listedWindows(input.windows),
    observed_at: isoFromUnixNano(lastEnd(t)),
  };
  // Every object above is built here in one fixed key order, so its JSON text is canonical
  // without the general canonicalizer (the hot path: one manifest per closed trajectory). The
  // content is serialized once: the digested document and the line are that text behind
  // their leading members (`content` always has members, so `slice(1)` follows a comma).
  const members = JSON.stringify(content).slice(1);
  const manifestId = `m1_${sha256Hex(`{"v":1,${members}`)}`;
  const manifest: AnalysisManifest = {
    record_kind: MANIFEST_RECORD_KIND,
    schema_version: MANIFEST_SCHEMA_VERSION,
    manifest_id: manifestId,
    ...content,
  };
  const head = `{"record_kind":${JSON.stringify(MANIFEST_RECORD_KIND)},"schema_version":${JSON.stringify(MANIFEST_SCHEMA_VERSION)},"manifest_id":"${manifestId}",`;
  return rememberRecordJson(manifest, head + members);
}

function checkStatuses(t: Trajectory, checks: CheckResults, findings: readonly Finding[]): CheckStatus[] {
  const idsByCheck = new Map<string, string[]>();
  for (const f of findings) {
    const check = f.analyst_id === 'l0' ? f.area : f.analyst_id;
    const ids = idsByCheck.get(check);
    if (ids === undefined) idsByCheck.set(check, [f.finding_id]);
    else ids.push(f.finding_id);
  }
  // Why a check that did not fire claims nothing: an incomplete capture (the absence-claiming
  // checks did not run; the others searched the captured steps only, and the spans not
  // captured may hold what they look for), or on a complete capture `silenced`: a capture gap
  // its capture-table row lists, or input of its own not captured (`checkSilences`).
  const out: CheckStatus[] = L0_CHECKS.map(({ pattern, silentOnIncomplete }) => {
    const ids = idsByCheck.get(pattern);
    if (ids !== undefined) return { check: pattern, status: 'fired', ...named(ids) };
    if (!t.complete) {
      return { check: pattern, status: 'unavailable', ...none(), reason: 'incomplete-capture', detail: silentOnIncomplete };
    }
    const silence = checks.silenced.find((s) => s.pattern === pattern);
    if (silence !== undefined) return { check: pattern, status: 'unavailable', ...none(), reason: silence.reason, detail: silence.detail };
    return { check: pattern, status: 'none-observed', ...none() };
  });
  const r = checks.repetition;
  const excluded =
    r.status !== 'none-observed' && r.excluded !== undefined && r.excluded.length > 0
      ? { excluded: r.excluded.map((e) => ({ trace_id: e.traceId, span_id: e.spanId, reason: e.reason })) }
      : {};
  if (r.status === 'observed') {
    out.push({
      check: 'tool-repetition',
      status: 'observed',
      ...named(idsByCheck.get('tool-repetition') ?? []),
      ...(r.complete ? {} : { detail: 'counts are lower bounds: the capture is incomplete, or some calls lack captured arguments or names' }),
      ...excluded,
    });
  } else if (r.status === 'none-observed') {
    out.push({ check: 'tool-repetition', status: 'none-observed', ...none() });
  } else {
    out.push({
      check: 'tool-repetition',
      status: 'unavailable',
      ...none(),
      // An incomplete capture first; else what was not captured (tool arguments, names) or a conflict.
      reason: t.complete ? [...r.reasons].sort()[0]! : 'incomplete-capture',
      detail: `no repetition among the captured steps; absence cannot be claimed: ${[...r.reasons].sort().join(', ')}`,
      ...excluded,
    });
  }
  return out;
}

const none = (): { finding_count: number; finding_ids: string[] } => ({ finding_count: 0, finding_ids: [] });

/** A check's findings: all counted, the first ids listed (sorted, so the same on every replay). */
function named(ids: string[]): { finding_count: number; finding_ids: string[] } {
  ids.sort();
  return { finding_count: ids.length, finding_ids: ids.length > MANIFEST_MAX_FINDING_IDS ? ids.slice(0, MANIFEST_MAX_FINDING_IDS) : ids };
}

/** Every judged window and the first unjudged ones, the rest counted by fate and reason. */
function listedWindows(windows: readonly WindowFate[]): Pick<AnalysisManifest, 'windows' | 'windows_omitted'> {
  const listed: WindowFate[] = [];
  const omitted = new Map<string, { fate: WindowFate['fate']; reason: string; count: number }>();
  let unjudged = 0;
  for (const w of windows) {
    if (w.fate === 'judged' || unjudged++ < MANIFEST_MAX_UNJUDGED_WINDOWS) {
      listed.push(windowEntry(w));
      continue;
    }
    const reason = w.reason ?? '';
    const key = `${w.fate}\u0000${reason}`;
    const entry = omitted.get(key);
    if (entry === undefined) omitted.set(key, { fate: w.fate, reason, count: 1 });
    else entry.count++;
  }
  const windows_omitted = [...omitted.values()].sort((a, b) =>
    a.fate < b.fate ? -1 : a.fate > b.fate ? 1 : a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0,
  );
  return { windows: listed, windows_omitted };
}

function windowEntry(w: WindowFate): WindowFate {
  return {
    window_id: w.window_id,
    kind: w.kind,
    anchor: w.anchor,
    triggers: [...w.triggers],
    fate: w.fate,
    ...(w.reason === undefined ? {} : { reason: w.reason }),
    ...(w.detail === undefined ? {} : { detail: w.detail }),
    finding_ids: [...w.finding_ids].sort(),
  };
}

function lastEnd(t: Trajectory): bigint {
  let end = 0n;
  for (const s of t.steps) if (s.endTimeUnixNano > end) end = s.endTimeUnixNano;
  return end;
}

/** `capture.notes` only when there is one, so a manifest with none is as before it existed. */
function notesOf(t: Trajectory): { notes?: CaptureNote[] } {
  const notes = captureNotes(t.steps);
  return notes.length === 0 ? {} : { notes };
}
