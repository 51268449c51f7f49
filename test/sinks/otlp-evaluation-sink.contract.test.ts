import { afterAll } from 'vitest';
import type { FindingLogRecord } from '../../src/sinks/finding-sink.ts';
import { parseOtlpEvaluationConfig } from '../../src/sinks/otlp/config.ts';
import { OtlpEvaluationSink } from '../../src/sinks/otlp/evaluation-sink.ts';
import { runFindingSinkContract } from '../contracts/finding-sink.contract.ts';
import { OtlpLogReceiver } from '../helpers/otlp-log-receiver.ts';

// The storage read back is what an OTLP/HTTP receiver acknowledged: each event's body is the
// finding (internal view), so the contract reads the findings back from the receiver.
const receivers: OtlpLogReceiver[] = [];
afterAll(async () => {
  for (const r of receivers) await r.stop();
});

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

runFindingSinkContract({
  name: 'OtlpEvaluationSink',
  open: async (dir, { pendingLimitRecords }) => {
    const receiver = await OtlpLogReceiver.start();
    receivers.push(receiver);
    const config = parseOtlpEvaluationConfig({ endpoint: receiver.url, maxOutboxRecords: pendingLimitRecords, retryInitialMs: 20, retryMaxMs: 200 });
    const sink = await OtlpEvaluationSink.open(config, { outboxDir: dir });
    return {
      sink,
      readBack: async (stream, count) => {
        const of = () => receiver.records.filter((r) => r.attributes['trajwatch.stream'] === stream);
        await until(() => of().length >= count, 8_000);
        return of().map((r) => JSON.parse(r.body!.stringValue!) as FindingLogRecord);
      },
    };
  },
});
