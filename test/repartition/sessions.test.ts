/**
 * Sessions at any scale (docs/scaling-out.md §4): real `trajwatch serve --source kafka`
 * processes, 2 and 3 of them, against the real broker; conversations of 3 to 6 traces, each
 * trace its own record keyed by trace id over 6 partitions. Stage 1 assembles by trace and
 * forwards to the internal topic keyed by session id; stage 2 assembles sessions. The group must
 * give what one `trajwatch replay` of the same input gives.
 */
import { Kafka } from 'kafkajs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { kafkaForTests, uniqueTopic, quietKafka } from '../helpers/kafka.ts';
import type { ServeProcess } from '../helpers/serve.ts';
import { readFindings, readTrajectories, startAll, waitFor } from '../helpers/serve-group.ts';
import { finalRevisions, replayFindingIds, settledOn, startSessionMember, type TrajectoryLine } from './session-group.ts';
import { conversations } from './session-records.ts';
import { startScriptedServer } from '../judge/scripted-chat-server.ts';
import { walkScript } from '../judge/walk/walk-harness.ts';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const brokers = await kafkaForTests();

function report(name: string, figures: Record<string, unknown>): void {
  process.stdout.write(`[sessions] ${name}: ${JSON.stringify(figures)}\n`);
}

describe.runIf(brokers !== undefined)('sessions through a consumer group: repartition by session id (real broker)', () => {
  const kafka = quietKafka('sessions-test', brokers);
  const admin = kafka.admin();
  const producer = kafka.producer();
  let members: ServeProcess[] = [];

  beforeAll(async () => {
    await Promise.all([admin.connect(), producer.connect()]);
  });
  afterEach(async () => {
    await Promise.all(members.map((m) => m.stop()));
    members = [];
  });
  afterAll(async () => {
    await Promise.all([admin.disconnect(), producer.disconnect()]);
  });

  it('a missing internal topic (createTopics off) or one of another size stops serve at start, naming the topic and the fix', async () => {
    const topic = uniqueTopic('sessions.topics');
    await admin.createTopics({
      topics: [
        { topic, numPartitions: 6 },
        { topic: `${topic}.sized`, numPartitions: 3 },
      ],
      waitForLeaders: true,
    });
    const groupId = uniqueTopic('trajwatch-topics');
    const missing = startSessionMember({ brokers: brokers!, topic, groupId, sessionsTopic: `${topic}.absent`, sessions: { createTopics: false } });
    await expect(missing).rejects.toThrow(new RegExp(`sessions topic ${topic}.absent does not exist: create it with 6 partitions`));
    const sized = startSessionMember({ brokers: brokers!, topic, groupId, sessionsTopic: `${topic}.sized` });
    await expect(sized).rejects.toThrow(new RegExp(`topic ${topic}.sized has 3 partitions, the configuration says 6 \\(source.kafka.sessions.partitions\\)`));
    // Nothing was created in the refused run's name.
    expect(await admin.listTopics()).not.toContain(`${topic}.absent`);
  }, 60_000);

  for (const instances of [2, 3]) {
    it(`${instances} instances: no partitioned-session, every session whole, the finding ids of replay`, async () => {
      const started = Date.now();
      const topic = uniqueTopic(`sessions.${instances}`);
      const sessionsTopic = `${topic}.sessions`;
      await admin.createTopics({ topics: [{ topic, numPartitions: 6 }], waitForLeaders: true });
      const groupId = uniqueTopic('trajwatch-sessions');
      members = await startAll(Array.from({ length: instances }, () => startSessionMember({ brokers: brokers!, topic, groupId, sessionsTopic })));
      const settled = await waitFor(() => settledOn(members, [topic, sessionsTopic], 6), 90_000);
      if (!settled) throw new Error(`the group did not settle:\n${members.map((m) => m.output()).join('\n---\n')}`);

      const convs = conversations(`g${instances}`, 60);
      const records = convs.flatMap((c) => c.records);
      const expected = await replayFindingIds(convs);
      await producer.send({ topic, acks: -1, messages: records.map((r) => ({ key: r.key, value: r.value })) });

      const dirs = members.map((m) => m.dataDir);
      const whole = async () => {
        const finals = finalRevisions((await readTrajectories(dirs)) as unknown as TrajectoryLine[]);
        return convs.every((c) => finals.get(c.sessionId)?.traceIds.length === c.traceIds.length);
      };
      await waitFor(async () => {
        const found = (await readFindings(dirs)).ids;
        return (await whole()) && [...expected].every((id) => found.has(id));
      }, 60_000);
      const written = await readFindings(dirs);
      const rows = (await readTrajectories(dirs)) as unknown as TrajectoryLine[];
      const finals = finalRevisions(rows);

      const partitioned = rows.filter((r) => r.incompleteReasons.includes('partitioned-session'));
      const notWhole = convs.filter((c) => finals.get(c.sessionId)?.traceIds.length !== c.traceIds.length).map((c) => c.sessionId);
      const missing = [...expected].filter((id) => !written.ids.has(id));
      const unexpected = [...written.ids].filter((id) => !expected.has(id));
      report(`${instances} instances`, {
        conversations: convs.length,
        traces: records.length,
        trajectoryLines: rows.length,
        sessionsOverOneRevision: [...finals.values()].filter((r) => r.revision > 1).length,
        expectedFindings: expected.size,
        distinctFound: written.ids.size,
        duplicates: written.lines - written.ids.size,
        perMember: written.perDir,
        seconds: (Date.now() - started) / 1000,
      });
      expect(partitioned).toEqual([]);
      expect(notWhole).toEqual([]);
      expect(missing).toEqual([]);
      expect(unexpected).toEqual([]);
      expect([...finals.values()].filter((r) => convs.some((c) => c.sessionId === r.key)).every((r) => r.complete)).toBe(true);
      // Both stages did their part on every member.
      expect(written.perDir.every((n) => n > 0)).toBe(true);
    }, 240_000);
  }

  it('the Kafka source with the repartition, the judge and the walk on, every stream external: every session whole, walk findings written in the external view, nothing refused', async () => {
    // The scripted Chat Completions server stands in for the judge's LLM endpoint (no LLM runs here).
    const model = await startScriptedServer(walkScript());
    try {
      const topic = uniqueTopic('sessions.combined');
      const sessionsTopic = `${topic}.sessions`;
      await admin.createTopics({ topics: [{ topic, numPartitions: 6 }], waitForLeaders: true });
      const groupId = uniqueTopic('trajwatch-combined');
      const extra = {
        sinks: { localLog: { audience: { findings: 'external' } } },
        judge: {
          enabled: true,
          client: { baseUrl: model.baseUrl, model: 'judge', apiKeyEnv: null, backoffMs: 1, timeoutMs: 5_000 },
          sampling: { rate: 0, triggers: { l0Hit: false, outbound: false, terminal: true } },
          walk: { enabled: true },
        },
      };
      members = await startAll(
        Array.from({ length: 2 }, () => startSessionMember({ brokers: brokers!, topic, groupId, sessionsTopic, findingsTopic: `${topic}.findings`, extra })),
      );
      const settled = await waitFor(() => settledOn(members, [topic, sessionsTopic], 6), 90_000);
      if (!settled) throw new Error(`the group did not settle:\n${members.map((m) => m.output()).join('\n---\n')}`);
      const convs = conversations('combined', 12);
      const expected = await replayFindingIds(convs);
      await producer.send({ topic, acks: -1, messages: convs.flatMap((c) => c.records).map((r) => ({ key: r.key, value: r.value })) });
      const dirs = members.map((m) => m.dataDir);
      const done = await waitFor(async () => {
        const found = (await readFindings(dirs)).ids;
        const finals = finalRevisions((await readTrajectories(dirs)) as unknown as TrajectoryLine[]);
        return convs.every((c) => finals.get(c.sessionId)?.traceIds.length === c.traceIds.length) && [...expected].every((id) => found.has(id));
      }, 90_000);
      expect(done, members.map((m) => m.output().slice(-2000)).join('\n---\n')).toBe(true);
      // The walk ran over the whole sessions, its findings passed the external view, and no stream refused a record.
      const stripRefusals = members.flatMap((m) => m.output().split('\n')).filter((l) => l.includes('audience-strip-failed'));
      expect(stripRefusals).toEqual([]);
      // The quarantine log is opened with an external stream; it must hold nothing.
      const refused = dirs.flatMap((d) =>
        existsSync(join(d, 'audience-refused.jsonl'))
          ? readFileSync(join(d, 'audience-refused.jsonl'), 'utf8')
              .split('\n')
              .filter((l) => l !== '')
          : [],
      );
      expect(refused).toEqual([]);
      expect(
        model.requests.length,
        members
          .map((m) =>
            m
              .output()
              .split('\n')
              .filter((l) => /judge|window/i.test(l))
              .slice(0, 8)
              .join('\n'),
          )
          .join('\n---\n'),
      ).toBeGreaterThan(0);
      // The walk's findings follow the inline ones (its judge calls are asynchronous).
      const walkLines = () =>
        dirs.flatMap((d) =>
          readFileSync(join(d, 'findings.jsonl'), 'utf8')
            .split('\n')
            .filter((l) => l.includes('"analyst_id":"layered-walk"')),
        );
      expect(await waitFor(async () => walkLines().length > 0, 60_000), members.map((m) => m.output().slice(-1500)).join('\n---\n')).toBe(true);
    } finally {
      await model.close();
    }
  }, 240_000);
});
