import { join } from 'node:path';
import { readLogLines } from '../../../../src/cli/local-log-files.ts';
import { sendFlaggedAgentRuns } from '../../../../test/helpers/agent-trace.ts';
import { consumeMessages, privateBroker, startBroker, stopBroker, uniqueTopic } from '../../../../test/helpers/kafka.ts';
import { count, drained, mib } from '../accounting.ts';
import type { Probe } from '../probe.ts';
import { rssBytes, sleep, startCampaignServe } from '../serve-process.ts';

/**
 * A broker outage under load: findings wait in the durable outbox while the broker is down and
 * all arrive once it is back; the findings on the topic equal the local log's.
 */
export const kafka: Probe = async ({ seconds }) => {
  const broker = privateBroker('campaign-outage', 19_098);
  if (broker === undefined) throw new Error('the kafka probe needs Java and Maven for its private broker');
  await startBroker(broker);
  const topic = uniqueTopic('campaign.findings');
  const serve = await startCampaignServe({
    config: {
      kafka: {
        brokers: broker.brokers,
        createTopics: true,
        topicPartitions: 1,
        topics: { findings: topic, alarms: uniqueTopic('campaign.alarms') },
        retryInitialMs: 100,
        retryMaxMs: 1_000,
        connectionTimeoutMs: 1_000,
        requestTimeoutMs: 3_000,
      },
    },
  });
  try {
    const batch = (from: number) => Array.from({ length: 20 }, (_, i) => `campaign-outage-${from + i}`);
    let sent = 0;
    const rss: number[] = [];
    const round = async () => {
      await sendFlaggedAgentRuns(serve.url, batch(sent));
      sent += 20;
      rss.push(rssBytes(serve.child.pid!));
    };
    await round();
    await stopBroker(broker);
    const downUntil = performance.now() + Math.max(10, seconds / 2) * 1000;
    while (performance.now() < downUntil) {
      await round();
      await sleep(500);
    }
    const healthyWhileDown = await serve.healthy(5_000);
    await startBroker(broker);
    await round();
    await drained(serve);
    const local = (await readLogLines(join(serve.dataDir, 'findings.jsonl'))).map((l) => JSON.parse(l) as { finding_id?: string; record_kind?: string });
    const localIds = new Set(local.filter((r) => r.finding_id !== undefined && r.record_kind === undefined).map((r) => r.finding_id!));
    const findingIds = (messages: readonly { value: string }[]) =>
      new Set(
        messages
          .map((m) => JSON.parse(m.value) as { finding_id?: string; record_kind?: string })
          .filter((r) => r.finding_id !== undefined && r.record_kind === undefined)
          .map((r) => r.finding_id!),
      );
    const onTopic = await consumeMessages(broker.brokers, [topic], (m) => findingIds(m).size >= localIds.size, 90_000);
    const topicIds = findingIds(onTopic);
    const missing = [...localIds].filter((id) => !topicIds.has(id)).length;
    const exit = await serve.stop();
    return {
      name: 'kafka',
      setup: `findings to a private broker; flagged agent runs sent through the OTel JS SDK (20 a round) while the broker is stopped for ${Math.max(10, seconds / 2)} s, then restarted`,
      rows: [
        ['agent runs sent', count(sent)],
        ['findings in the local log / distinct on the topic', `${count(localIds.size)} / ${count(topicIds.size)} (${count(onTopic.length)} messages)`],
        ['local findings missing from the topic', count(missing)],
        ['RSS while the broker was down (first → last round)', `${mib(rss[0] ?? 0)} → ${mib(rss[rss.length - 1] ?? 0)}`],
        ['SIGTERM', `exit ${exit.code} in ${exit.ms} ms`],
      ],
      checks: [
        { what: 'every local finding reached the topic after the outage', ok: missing === 0 && localIds.size > 0 },
        { what: '/healthz answered while the broker was down', ok: healthyWhileDown },
        { what: 'SIGTERM exits 0', ok: exit.code === 0 },
      ],
    };
  } finally {
    await serve.stop();
    await stopBroker(broker).catch(() => undefined);
  }
};
