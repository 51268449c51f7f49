import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { readOtlpFile } from '../../../src/ingest/otlp/file.ts';

const root = protobuf.loadSync(fileURLToPath(new URL('../../fixtures/otlp/logs.proto', import.meta.url)));
const requestType = root.lookupType('opentelemetry.proto.logs.v1.ExportLogsServiceRequest');

const TRACE = '5b8efff798038103d269b633813fc60c';

describe('readOtlpFile with recorded logs requests', () => {
  const protoLogs = () =>
    Buffer.from(
      requestType
        .encode(
          requestType.fromObject({
            resourceLogs: [
              {
                scopeLogs: [
                  {
                    logRecords: [
                      {
                        timeUnixNano: '1700000000000000001',
                        traceId: Buffer.from(TRACE, 'hex'),
                        spanId: Buffer.from('bbbbbbbbbbbbbbbb', 'hex'),
                        eventName: 'gen_ai.choice',
                        body: { stringValue: 'done' },
                      },
                    ],
                  },
                ],
              },
            ],
          }),
        )
        .finish(),
    );

  it('reads a protobuf logs request as logs, whatever the file is called (its records do not parse as spans)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-otlp-file-'));
    for (const name of ['002-logs.pb', 'capture.bin']) {
      const path = join(dir, name);
      await writeFile(path, protoLogs());
      const read = await readOtlpFile(path);
      expect(Array.isArray(read)).toBe(true);
      const [recorded] = read as Exclude<typeof read, Error>;
      expect(recorded!.signal).toBe('logs');
      expect(recorded!.signal === 'logs' && recorded!.request.logs[0]).toMatchObject({ traceId: TRACE, eventName: 'gen_ai.choice', body: 'done' });
    }
  });

  it('reads OTLP/JSON lines of logs and traces requests, each by its top-level key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-otlp-file-'));
    const path = join(dir, 'mixed.jsonl');
    await writeFile(path, `${JSON.stringify({ resourceLogs: [] })}\n${JSON.stringify({ resourceSpans: [] })}\n`);
    const read = await readOtlpFile(path);
    expect((read as { signal: string }[]).map((r) => r.signal)).toEqual(['logs', 'traces']);
  });
});
