import { describe, expect, it } from 'vitest';
import { ReceiverConfigSchema } from '../../../src/ingest/otlp/receiver-config.ts';

describe('receiver config: the in-flight budget and the connection bounds', () => {
  it('defaults every bound to a finite value, none left to Node or grpc-js', () => {
    const c = ReceiverConfigSchema.parse({});
    expect(c).toMatchObject({
      maxInflightBytes: 256 * 1024 * 1024,
      maxConnections: 4_096,
      idleTimeoutMs: 65_000,
      keepAliveGraceMs: 5_000,
      headersTimeoutMs: 30_000,
      requestTimeoutMs: 60_000,
    });
  });

  it('refuses a budget smaller than the largest request allowed, naming the key and both values', () => {
    const r = ReceiverConfigSchema.safeParse({ maxInflightBytes: 1024, maxBodyBytes: 1024, maxDecompressedBytes: 1024 });
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      [
        'maxInflightBytes',
        'maxInflightBytes (1024) must be at least maxBodyBytes + maxDecompressedBytes (2048), or the largest request allowed could never be taken',
      ],
    ]);
  });

  it('refuses a header timeout longer than the request timeout', () => {
    const r = ReceiverConfigSchema.safeParse({ headersTimeoutMs: 90_000, requestTimeoutMs: 60_000 });
    expect(r.error!.issues.map((i) => i.path.join('.'))).toEqual(['headersTimeoutMs']);
  });
});
