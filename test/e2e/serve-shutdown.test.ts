import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServe, waitForLines } from '../helpers/serve.ts';

describe('serve shutdown', () => {
  it('on SIGTERM closes open trajectories as incomplete (shutdown) and exits 0', async () => {
    const serve = await startServe({ assembler: { quietPeriodMs: 60_000, idleTimeoutMs: 60_000 } });
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: '0af7651916cd43dd8448eb211c80319c',
                  spanId: 'b7ad6b7169203331',
                  name: 'root',
                  startTimeUnixNano: '1',
                  endTimeUnixNano: '2',
                },
              ],
            },
          ],
        },
      ],
    };
    const res = await fetch(`${serve.url}/v1/traces`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    expect(await serve.stop()).toBe(0);
    const rows = await waitForLines(join(serve.dataDir, 'trajectories.jsonl'), (r) => r.length === 1, 1_000);
    expect(rows[0]).toMatchObject({ key: '0af7651916cd43dd8448eb211c80319c', complete: false, incompleteReasons: ['shutdown'] });
    expect(serve.output()).toMatch(/stopped/);
  });
});
