/**
 * `trajwatch verify` fails on a directory made to break each invariant: a clean directory
 * written by `replay` (the TRAIL traces and framework captures) or a real `serve`, then one
 * record corrupted. Each case exits 1 naming that invariant — and only that one — and the
 * record (file and line, or segment and offset) it is in.
 */
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sendFlaggedAgentRuns } from '../helpers/agent-trace.ts';
import { runCli } from '../helpers/cli.ts';
import { startServe, waitForLines } from '../helpers/serve.ts';
import { trailFiles } from '../helpers/trail.ts';
import { captureFiles, cleanReplayDir, copyDir, jsonLines, replayDir, verifyJson, writeJsonLines } from './helpers.ts';

type Row = Record<string, unknown> & { record_kind?: string; subject?: { trajectory_key: string; revision: number }; finding_id?: string };
interface Check {
  check: string;
  status: string;
  reason?: string;
  detail?: string;
}

let clean: string;
beforeAll(async () => {
  clean = await cleanReplayDir();
}, 300_000);

/** A copy of the clean directory with findings.jsonl's rows changed by `edit`. */
async function withFindings(edit: (rows: Row[]) => Row[]): Promise<string> {
  const dir = await copyDir(clean);
  const path = join(dir, 'findings.jsonl');
  await writeJsonLines(path, edit(await jsonLines<Row>(path)));
  return dir;
}

/** Runs verify on `dir`: exit 1, and every violation is of `invariant`; returns them. */
async function violated(dir: string, invariant: string, extra: string[] = []) {
  const { code, out } = await verifyJson(dir, extra);
  expect(
    out.violations.map((v) => v.invariant),
    JSON.stringify(out.violations, null, 1),
  ).toEqual(out.violations.map(() => invariant));
  expect(out.violations.length).toBeGreaterThan(0);
  expect(code).toBe(1);
  expect(out.summary.ok).toBe(false);
  expect(out.summary.invariants.find((i) => i.id === invariant)!.violations).toBe(out.violations.length);
  return out.violations;
}

const isManifest = (r: Row) => r.record_kind === 'analysis-manifest';

// Each case starts real processes (verify; replay or serve for some): bounded generously for loaded shared cores.
describe('trajwatch verify names each broken invariant and the record it is in', { timeout: 300_000 }, () => {
  it('record-schema: a findings line that is not JSON, and a trajectory line without its key', async () => {
    const dir = await copyDir(clean);
    const findings = join(dir, 'findings.jsonl');
    const trajectories = join(dir, 'trajectories.jsonl');
    const [first] = await jsonLines<Record<string, unknown>>(trajectories);
    const { key: _key, ...keyless } = first!;
    await appendFile(findings, '{"truncated": \n');
    await appendFile(trajectories, `${JSON.stringify({ ...keyless, revision: 9 })}\n`);
    const found = await violated(dir, 'record-schema');
    expect(found.map((v) => v.location)).toEqual([
      { file: trajectories, line: await lineCount(trajectories) },
      { file: findings, line: await lineCount(findings) },
    ]);
    expect(found[0]!.what).toMatch(/^not a valid trajectory line: key: /);
    expect(found[1]!.what).toMatch(/^not JSON: /);
  });

  it('manifest-vs-capture: absence claimed where a capture gap hides the subject, on an incomplete capture, and a gap named that is not there', async () => {
    const edits: { line: number; key: string }[] = [];
    const dir = await withFindings((rows) =>
      rows.map((r, i) => {
        if (!isManifest(r)) return r;
        const checks = r.checks as Check[];
        const gapSilenced = checks.find((c) => c.check === 'fault-passthrough' && c.reason === 'tool-result-not-captured');
        const incomplete = (r.capture as { complete: boolean }).complete === false && checks.every((c) => c.status === 'unavailable');
        if (gapSilenced !== undefined && edits.length === 0) {
          // The trajectory has a tool-result-not-captured gap; the capture table says it hides fault-passthrough's subject.
          edits.push({ line: i + 1, key: r.subject!.trajectory_key });
          return { ...r, checks: checks.map((c) => (c === gapSilenced ? { check: c.check, status: 'none-observed', finding_count: 0, finding_ids: [] } : c)) };
        }
        if (incomplete && edits.length === 1) {
          edits.push({ line: i + 1, key: r.subject!.trajectory_key });
          return { ...r, checks: checks.map((c, j) => (j === 0 ? { check: c.check, status: 'none-observed', finding_count: 0, finding_ids: [] } : c)) };
        }
        if (edits.length === 2 && checks.some((c) => c.reason === 'tool-result-not-captured')) {
          edits.push({ line: i + 1, key: r.subject!.trajectory_key });
          return { ...r, checks: checks.map((c) => (c.reason === 'tool-result-not-captured' ? { ...c, reason: 'clock-skew' } : c)) };
        }
        return r;
      }),
    );
    expect(edits).toHaveLength(3);
    const found = await violated(dir, 'manifest-vs-capture');
    const file = join(dir, 'findings.jsonl');
    expect(found.map((v) => [v.location, v.key])).toEqual(edits.map((e) => [{ file, line: e.line }, e.key]));
    expect(found[0]!.what).toMatch(/fault-passthrough is none-observed while the trajectory has a tool-result-not-captured gap/);
    expect(found[1]!.what).toMatch(/none-observed \(a claim of absence\) on an incomplete capture/);
    expect(found[2]!.what).toMatch(/unavailable for a clock-skew gap the trajectory does not have/);
  });

  it('manifest-vs-capture: a conditional cell of the capture table, read with the checks configuration verify is given', async () => {
    // The TRAIL runs have tool-result-not-captured gaps on steps that are no gate by the default
    // tool classes, so the gate checks claimed absence. Told every tool is a gate, verify finds
    // that the gap hides those checks' subject: the claims no longer follow from the capture.
    const dir = await copyDir(clean);
    const config = join(dir, 'every-tool-a-gate.json');
    await writeFile(config, JSON.stringify({ checks: { gates: { include: ['.'] } } }));
    const found = await violated(dir, 'manifest-vs-capture', ['--config', config]);
    expect(found.length).toBeGreaterThan(0);
    for (const v of found)
      expect(v.what).toMatch(/^(unguarded-send|out-of-order-gate) is none-observed while the trajectory has a tool-result-not-captured gap/);
    expect((await verifyJson(dir)).code).toBe(0);
  });

  it('window-fate: one window given two fates in a manifest', async () => {
    let line = 0;
    const window = { window_id: `w1_${'ab'.repeat(12)}`, kind: 'event', anchor: 'a/b', triggers: ['l0-hit'], reason: 'rate', finding_ids: [] };
    const dir = await withFindings((rows) => {
      line = rows.findIndex(isManifest) + 1;
      return rows.map((r, i) =>
        i === line - 1
          ? {
              ...r,
              windows: [
                { ...window, fate: 'not-sampled' },
                { ...window, fate: 'deferred' },
              ],
            }
          : r,
      );
    });
    const [v, ...rest] = await violated(dir, 'window-fate');
    expect(rest).toEqual([]);
    expect(v!.location).toEqual({ file: join(dir, 'findings.jsonl'), line });
    expect(v!.what).toBe(`window ${window.window_id} has two fates in one manifest: not-sampled and deferred`);
  });

  it('audience-strip: an external log holding an internal field, and a record the service refused to strip', async () => {
    const config = { sinks: { localLog: { audience: { findings: 'external' } } } };
    const external = await replayDir([...trailFiles(), ...(await captureFiles())], config);
    const path = join(external, 'findings.jsonl');
    const rows = await jsonLines<Row>(path);
    const i = rows.findIndex((r) => !isManifest(r));
    expect(rows[i]).not.toHaveProperty('id_basis');
    const internal = (await jsonLines<Row>(join(clean, 'findings.jsonl'))).find((r) => r.finding_id === rows[i]!.finding_id)!;
    await writeJsonLines(
      path,
      rows.map((r, j) => (j === i ? internal : r)),
    );
    await writeFile(
      join(external, 'audience-refused.jsonl'),
      `${JSON.stringify({ refusal: 'audience-strip-failed', sink: 'localLog', stream: 'findings', id: internal.finding_id, reason: 'external view still carries internal field x', record: internal })}\n`,
    );
    const found = await violated(external, 'audience-strip', ['--config', join(external, 'config.json')]);
    expect(found.map((v) => v.location)).toEqual([
      { file: path, line: i + 1 },
      { file: join(external, 'audience-refused.jsonl'), line: 1 },
    ]);
    expect(found[0]!.what).toMatch(/external stream and this finding carries the internal field id_basis/);
    expect(found[1]!.what).toMatch(/refused the external view/);
  });

  it('revision-unique: a trajectory revision written twice with other spans, and a revision after a later one', async () => {
    const dir = await copyDir(clean);
    const path = join(dir, 'trajectories.jsonl');
    const rows = await jsonLines<{ key: string; revision: number; steps: unknown[] }>(path);
    const last = rows.findIndex((r) => r.revision === 5);
    expect(last).toBeGreaterThan(0);
    const once = rows.find((r) => !rows.some((o) => o !== r && o.key === r.key))!;
    await writeJsonLines(path, [
      ...rows,
      // A redelivery (the same revision, the same spans): at least once, not a violation.
      rows[0],
      // Revision 5 again, one step fewer.
      { ...rows[last], steps: rows[last]!.steps.slice(1) },
      // Revisions 3 then 2 of a key written once so far.
      { ...once, revision: 3 },
      { ...once, revision: 2 },
    ]);
    const { out } = await verifyJson(dir);
    expect(out.summary.invariants.find((i) => i.id === 'revision-unique')!.note).toMatch(/^1 record\(s\) written again with the same content/);
    const found = await violated(dir, 'revision-unique');
    expect(found.map((v) => [v.location, v.key])).toEqual([
      [{ file: path, line: rows.length + 2 }, rows[last]!.key],
      [{ file: path, line: rows.length + 4 }, once.key],
    ]);
    expect(found[0]!.what).toBe(`trajectory revision 5 written twice with other content: first at ${path}:${last + 1}`);
    expect(found[1]!.what).toBe('trajectory revision 2 after revision 3: revisions of a key must increase');
  });

  it('finding-id-stable: a finding whose claim no longer makes its id', async () => {
    let line = 0;
    let id = '';
    const dir = await withFindings((rows) => {
      // The first revision of the session with five: the same finding id recurs in the later revisions.
      const i = rows.findIndex((r) => !isManifest(r) && r.subject!.trajectory_key.startsWith('matrix-openllmetry') && r.subject!.revision === 1);
      line = i + 1;
      id = rows[i]!.finding_id!;
      return rows.map((r, j) => (j === i ? { ...r, claim: `${r.claim as string} (edited)` } : r));
    });
    const found = await violated(dir, 'finding-id-stable');
    expect(found[0]!.location).toEqual({ file: join(dir, 'findings.jsonl'), line });
    expect(found[0]!.what).toMatch(new RegExp(`^finding_id ${id} is not the id of its identity inputs`));
    // Its later revisions carry the unedited claim under the same id: one id, two claims.
    expect(found.slice(1).map((v) => v.what)).toContain(`finding_id ${id} names another claim than at ${join(dir, 'findings.jsonl')}:${line}`);
  });

  it('manifest-findings: a finding its manifest names is missing', async () => {
    let removed: Row | undefined;
    let manifestLine = 0;
    const dir = await withFindings((rows) => {
      removed = rows.find((r) => !isManifest(r))!;
      const kept = rows.filter((r) => r !== removed);
      manifestLine = kept.findIndex((r) => isManifest(r) && r.subject!.trajectory_key === removed!.subject!.trajectory_key) + 1;
      return kept;
    });
    const found = await violated(dir, 'manifest-findings');
    expect(found).toHaveLength(1);
    expect(found[0]!.location).toEqual({ file: join(dir, 'findings.jsonl'), line: manifestLine });
    expect(found[0]!.what).toMatch(new RegExp(`names finding ${removed!.finding_id}, not written before the manifest`));
  });

  it('spans-accounted: a released span of a real serve in no trajectory (its trajectory line removed)', async () => {
    const serve = await startServe({ assembler: { quietPeriodMs: 200 } });
    try {
      await sendFlaggedAgentRuns(serve.url, ['conv-verify-lost', 'conv-verify-kept']);
      await waitForLines(join(serve.dataDir, 'findings.jsonl'), (r) => r.filter((x) => 'record_kind' in x).length >= 2);
      await waitForReleased(serve.dataDir);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    const path = join(serve.dataDir, 'trajectories.jsonl');
    const rows = await jsonLines<{ key: string; steps: { id: string; traceId: string }[] }>(path);
    const lost = rows.find((r) => r.key === 'conv-verify-lost')!;
    await writeJsonLines(
      path,
      rows.filter((r) => r !== lost),
    );
    const found = await violated(serve.dataDir, 'spans-accounted');
    expect(found.map((v) => /span (\S+) of released request/.exec(v.what)?.[1]).sort()).toEqual(lost.steps.map((s) => `${s.traceId}/${s.id}`).sort());
    for (const v of found) expect(v.location.file).toMatch(/\/wal\/seg-\d{16}\.wal$/);
    expect(found.every((v) => typeof v.location.offset === 'number')).toBe(true);
  });

  it('exit 2 with a clear message for a directory that is not there, or holds no log', async () => {
    const missing = await runCli(['verify', '--data-dir', join(clean, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read the data directory .*nope/);
    const empty = await copyDir(clean);
    await writeFile(join(empty, 'trajectories.jsonl'), '');
    await runCli(['verify', '--data-dir', join(empty, 'trajectories.jsonl')]).then((r) => {
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/is not a directory/);
    });
    const bad = await runCli(['verify', '--data-dir', clean, '--bogus']);
    expect(bad.code).toBe(2);
  });
});

async function lineCount(path: string): Promise<number> {
  return (await readFile(path, 'utf8')).split('\n').filter((l) => l !== '').length;
}

/** Until the write-ahead log has released requests (its 500 ms timer); bounded. */
async function waitForReleased(dataDir: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    const { out } = await verifyJson(dataDir);
    if (
      out.summary.invariants.find((x) => x.id === 'spans-accounted')!.checked > 0 &&
      out.summary.invariants.find((x) => x.id === 'spans-accounted')!.note === undefined
    )
      return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('the write-ahead log did not release every request');
}
