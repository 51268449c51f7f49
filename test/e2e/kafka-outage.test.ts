import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../src/findings/schema.ts';
import { sendFlaggedAgentRuns } from '../helpers/agent-trace.ts';
import { consumeMessages, privateBroker, startBroker, stopBroker, uniqueTopic } from '../helpers/kafka.ts';
import { type ServeProcess, startServe, waitForLines } from '../helpers/serve.ts';

// A broker of this test's own, so stopping it disturbs no other test.
const broker = privateBroker('serve-outage', 19096);

async function residentBytes(serve: ServeProcess): Promise<number> {
  const text = await (await fetch(`${serve.url}/metrics`)).text();
  return Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)![1]);
}

describe.runIf(broker !== undefined)('serve through a broker outage', () => {
  let serve: ServeProcess | undefined;
  afterAll(async () => {
    await serve?.stop();
    await stopBroker(broker!);
  });

  it('delivers every finding once the broker is back; the process never crashes or grows without bound', async () => {
    await startBroker(broker!);
    const topic = uniqueTopic('outage.findings');
    serve = await startServe({
      kafka: {
        brokers: broker!.brokers,
        createTopics: true,
        topicPartitions: 1,
        topics: { findings: topic, alarms: uniqueTopic('outage.alarms') },
        retryInitialMs: 100,
        retryMaxMs: 1_000,
        connectionTimeoutMs: 1_000,
        requestTimeoutMs: 3_000,
      },
    });
    const batch = (from: number) => Array.from({ length: 10 }, (_, i) => `conv-outage-${from + i}`);
    const rss: number[] = [];

    await sendFlaggedAgentRuns(serve.url, batch(0));
    await stopBroker(broker!);
    // While the broker is down: keep sending; findings wait in the durable outbox.
    for (let round = 1; round <= 4; round++) {
      await sendFlaggedAgentRuns(serve.url, batch(round * 10));
      rss.push(await residentBytes(serve));
    }
    const expected = 50 * 2; // per run: error-output + one repetition group
    // Findings only: the log and topic also carry each trajectory's analysis manifest (record_kind).
    const findingsOnly = <T extends object>(rows: T[]) => rows.filter((r) => !('record_kind' in r));
    const local = findingsOnly(await waitForLines<Finding>(join(serve.dataDir, 'findings.jsonl'), (r) => findingsOnly(r).length >= expected, 30_000));
    expect(serve.child.exitCode).toBeNull();
    await startBroker(broker!);

    const messages = await consumeMessages(
      broker!.brokers,
      [topic],
      (m) => new Set(findingsOnly(m.map((x) => JSON.parse(x.value))).map((f) => f.finding_id)).size >= expected,
      90_000,
    );
    const delivered = new Set(findingsOnly(messages.map((m) => JSON.parse(m.value) as Finding)).map((f) => f.finding_id));
    const lost = local.filter((f) => !delivered.has(f.finding_id));
    console.log(
      `outage: ${local.length} findings expected, ${delivered.size} distinct delivered, ` +
        `${messages.length - delivered.size} duplicates, ${lost.length} lost; RSS while down ${rss.map((b) => Math.round(b / 2 ** 20)).join(' → ')} MiB`,
    );
    expect(local).toHaveLength(expected);
    expect(lost).toEqual([]);
    expect(delivered.size).toBe(expected);
    expect(serve.child.exitCode).toBeNull();
    // Bounded: findings wait on disk, not in memory.
    expect(Math.max(...rss)).toBeLessThan(512 * 2 ** 20);
  }, 240_000);
});
