/**
 * Helpers for the sessions-at-any-scale tests: group members with the repartition on, the
 * single-process `trajwatch replay` the group is compared with, and what members logged.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type ServeProcess, startServe } from '../helpers/serve.ts';
import type { Conversation } from './session-records.ts';

const CLI = new URL('../../src/cli/main.ts', import.meta.url).pathname;

export interface SessionMemberOptions {
  brokers: string[];
  topic: string;
  groupId: string;
  sessionsTopic: string;
  dataDir?: string;
  /** Also deliver findings to this Kafka topic (the Kafka sink). */
  findingsTopic?: string;
  /** Overrides of `source.kafka.sessions`. */
  sessions?: Record<string, unknown>;
  /** More top-level configuration (a judge, audiences...), merged last. */
  extra?: Record<string, unknown>;
}

/** One member running both stages; quiet periods short so the tests are quick. */
export function startSessionMember(o: SessionMemberOptions): Promise<ServeProcess> {
  const config = {
    assembler: { quietPeriodMs: 1_000, idleTimeoutMs: 60_000 },
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
        sessions: { topic: o.sessionsTopic, partitions: 6, ...o.sessions },
      },
    },
    ...(o.findingsTopic === undefined
      ? {}
      : { kafka: { brokers: o.brokers, topics: { findings: o.findingsTopic, alarms: `${o.findingsTopic}.alarms` }, createTopics: true } }),
    ...o.extra,
  };
  return startServe(config, ['--source', 'kafka', ...(o.dataDir === undefined ? [] : ['--data-dir', o.dataDir])]);
}

/** The member's latest assignment of `topic` (from its `partitions assigned` lines), or undefined. */
export function assignmentOf(member: ServeProcess, topic: string): number[] | undefined {
  let last: number[] | undefined;
  for (const line of member.output().split('\n')) {
    if (!line.includes('"partitions assigned"')) continue;
    const row = JSON.parse(line) as { partitions: number[]; topic: string };
    if (row.topic === topic) last = row.partitions;
  }
  return last;
}

/** Whether the members' latest assignments of every topic split its partitions among all of them. */
export function settledOn(members: readonly ServeProcess[], topics: readonly string[], partitions: number): boolean {
  for (const topic of topics) {
    const seen = new Set<number>();
    let total = 0;
    for (const m of members) {
      const a = assignmentOf(m, topic);
      if (a === undefined || a.length === 0) return false;
      for (const p of a) seen.add(p);
      total += a.length;
    }
    if (seen.size !== partitions || total !== partitions) return false;
  }
  return true;
}

/** The finding ids of `trajwatch replay` over the conversations (one OTLP/JSON request per line, in order). */
export async function replayFindingIds(conversations: readonly Conversation[]): Promise<Set<string>> {
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-replay-'));
  const input = join(dir, 'input.jsonl');
  const findings = join(dir, 'findings.jsonl');
  const config = join(dir, 'config.json');
  await writeFile(input, conversations.flatMap((c) => c.requests.map((r) => JSON.stringify(r))).join('\n') + '\n');
  // Sessions are an hour apart in event time and their turns within two seconds: a quiet period
  // of a minute closes each session once, whole (the quiet period decides when, never what).
  await writeFile(config, JSON.stringify({ assembler: { quietPeriodMs: 60_000, idleTimeoutMs: 120_000 } }));
  await promisify(execFile)(process.execPath, [CLI, 'replay', input, '--findings', findings, '--config', config, '--trajectories', join(dir, 'traj.jsonl')]);
  const ids = new Set<string>();
  for (const line of (await readFile(findings, 'utf8')).split('\n')) {
    if (line === '') continue;
    const row = JSON.parse(line) as { finding_id?: string };
    if (row.finding_id !== undefined) ids.add(row.finding_id);
  }
  return ids;
}

export interface TrajectoryLine {
  key: string;
  revision: number;
  traceIds: string[];
  complete: boolean;
  incompleteReasons: string[];
}

/** Per trajectory key, its highest revision across the members' trajectory logs. */
export function finalRevisions(rows: readonly TrajectoryLine[]): Map<string, TrajectoryLine> {
  const out = new Map<string, TrajectoryLine>();
  for (const r of rows) {
    const seen = out.get(r.key);
    if (seen === undefined || r.revision > seen.revision || (r.revision === seen.revision && r.traceIds.length > seen.traceIds.length)) out.set(r.key, r);
  }
  return out;
}
