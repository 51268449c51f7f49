/**
 * Helpers for the consumer-group tests: real `trajwatch serve --source kafka` members, the
 * findings they wrote, and the findings the records should give.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createAnalyzer } from '../../src/analyze.ts';
import { ConfigSchema } from '../../src/config-schema.ts';
import { DecodeError } from '../../src/errors.ts';
import { decodeOtlpProto } from '../../src/ingest/otlp/proto-decode.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import { type ServeProcess, startServe } from './serve.ts';
import type { OtlpRecord } from './otlp-records.ts';

export interface MemberOptions {
  brokers: string[];
  topic: string;
  groupId: string;
  /** Reuse a data directory (a restart after a crash). */
  dataDir?: string;
  idleTimeoutMs?: number;
}

/** Assembler settings shared by the members and by {@link expectedFindingIds}. */
const QUIET_PERIOD_MS = 500;

/** Starts one group member: OTLP receivers off, spans from Kafka only. */
export function startMember(o: MemberOptions): Promise<ServeProcess> {
  const config = {
    assembler: { quietPeriodMs: QUIET_PERIOD_MS, idleTimeoutMs: o.idleTimeoutMs ?? 60_000 },
    source: {
      http: false,
      kafka: {
        brokers: o.brokers,
        topic: o.topic,
        groupId: o.groupId,
        deadLetterTopic: `${o.topic}.dlq`,
        commitIntervalMs: 200,
        sessionTimeoutMs: 6_000,
        heartbeatIntervalMs: 500,
        rebalanceTimeoutMs: 10_000,
      },
    },
  };
  return startServe(config, ['--source', 'kafka', ...(o.dataDir === undefined ? [] : ['--data-dir', o.dataDir])]);
}

/**
 * Starts every member at once, like `Promise.all`, but when one fails to start the others are
 * stopped before the error is thrown: no member is left running with nobody to stop it.
 */
export async function startAll(starts: readonly Promise<ServeProcess>[]): Promise<ServeProcess[]> {
  const settled = await Promise.allSettled(starts);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed === undefined) return settled.map((s) => (s as PromiseFulfilledResult<ServeProcess>).value);
  await Promise.all(settled.map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)));
  throw failed.reason;
}

/** The partitions of the member's latest assignment (from its `partitions assigned` log line), or undefined. */
export function lastAssignment(member: ServeProcess): number[] | undefined {
  let last: number[] | undefined;
  for (const line of member.output().split('\n')) {
    if (!line.includes('"partitions assigned"')) continue;
    const row = JSON.parse(line) as { partitions: number[]; component?: string };
    // The OTLP source's, not stage 2's (`source.kafka.sessions`, the internal topic).
    if (row.component === 'source.kafka') last = row.partitions;
  }
  return last;
}

/** Whether the members' latest assignments split `partitions` among all of them, each owning some. */
export function groupSettled(members: readonly ServeProcess[], partitions: number): boolean {
  const seen = new Set<number>();
  let total = 0;
  for (const m of members) {
    const a = lastAssignment(m);
    if (a === undefined || a.length === 0) return false;
    for (const p of a) seen.add(p);
    total += a.length;
  }
  return seen.size === partitions && total === partitions;
}

export interface WrittenFindings {
  /** Every line of every data directory's findings.jsonl, by finding id. */
  lines: number;
  ids: Set<string>;
  /** Lines per data directory. */
  perDir: number[];
  /** A last line cut by SIGKILL (not JSON). */
  tornLines: number;
}

/** Reads the findings every member wrote (each data directory once). */
export async function readFindings(dataDirs: readonly string[]): Promise<WrittenFindings> {
  const out: WrittenFindings = { lines: 0, ids: new Set(), perDir: [], tornLines: 0 };
  for (const dir of new Set(dataDirs)) {
    let text = '';
    try {
      text = await readFile(join(dir, 'findings.jsonl'), 'utf8');
    } catch {
      // No finding written yet.
    }
    let n = 0;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        const row = JSON.parse(line) as { finding_id?: string };
        // The log also holds each trajectory's analysis manifest: only findings are counted here.
        if (row.finding_id === undefined) continue;
        out.ids.add(row.finding_id);
        n++;
      } catch {
        out.tornLines++;
      }
    }
    out.lines += n;
    out.perDir.push(n);
  }
  return out;
}

/** Every trajectory line the members wrote. */
export async function readTrajectories(
  dataDirs: readonly string[],
): Promise<{ key: string; complete: boolean; incompleteReasons: string[]; steps: unknown[] }[]> {
  const rows = [];
  for (const dir of new Set(dataDirs)) {
    const text = await readFile(join(dir, 'trajectories.jsonl'), 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        rows.push(JSON.parse(line));
      } catch {
        // A line cut by SIGKILL.
      }
    }
  }
  return rows;
}

/**
 * The finding ids the records give when one process reads them all, keyed by session as over
 * OTLP/HTTP: with the repartition (on by default) a consumer group gives the same.
 */
export async function expectedFindingIds(records: readonly OtlpRecord[]): Promise<Set<string>> {
  const config = ConfigSchema.parse({ assembler: { quietPeriodMs: QUIET_PERIOD_MS } });
  const ids = new Set<string>();
  const pipeline = new Pipeline({
    limits: config.assembler,
    clock: 'arrival',
    analyze: createAnalyzer(config),
    keyBy: 'session',
    sinks: [
      {
        name: 'expected',
        write: (findings) => findings.forEach((f) => ids.add(f.finding_id)),
        backpressure: () => undefined,
        backlog: () => ({ records: 0, bytes: 0 }),
        flushed: async () => {},
        close: async () => {},
      },
    ],
  });
  for (const r of records) {
    const decoded = decodeOtlpProto(r.value);
    if (decoded instanceof DecodeError) throw decoded;
    pipeline.accept(decoded);
  }
  await pipeline.drain('end-of-input');
  return ids;
}

/** Waits (bounded) until `ok()`; returns whether it held. */
export async function waitFor(ok: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ok()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One sample of a member's /metrics (undefined when absent). */
export async function metric(member: ServeProcess, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${member.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}
