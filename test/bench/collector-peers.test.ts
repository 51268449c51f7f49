// The Collectors the peer benchmark measures trajwatch against (bench/peers.ts), built by
// bench/otelcol/build.sh from the Go module proxy and run for real: both configs are valid for
// that binary, and the durable one does the durable work it is described as doing (every span
// in its file exporter's file, its queue on file_storage), or the comparison would not be fair.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpSpanCount, syntheticHttpDataset } from '../../bench/datasets.ts';
import { runLoad } from '../../bench/http-load.ts';
import { collectorConfig, durableCollectorPeer } from '../../bench/peers.ts';
import { BUILD_TIMEOUT_MS, ensureCollector } from '../ops/otelcol.ts';

const run = promisify(execFile);
const BENCH_BUILD = new URL('../../bench/otelcol/build.sh', import.meta.url).pathname;

describe('the peer benchmark Collectors', () => {
  let bin: string;
  const dir = mkdtempSync(join(tmpdir(), 'collector-peers-'));
  beforeAll(async () => {
    bin = await ensureCollector(BENCH_BUILD);
  }, BUILD_TIMEOUT_MS);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([false, true])('the config (durable: %s) is valid for the built binary', async (durable) => {
    const path = join(dir, `config-${durable}.yaml`);
    writeFileSync(path, collectorConfig(4318, dir, durable));
    await expect(run(bin, ['validate', '--config', path])).resolves.toBeDefined();
  });

  it('the durable Collector writes every span it accepted to its file and keeps its queue on file_storage', async () => {
    const server = await durableCollectorPeer.start();
    try {
      const data = syntheticHttpDataset(50, 4, 7);
      const load = await runLoad({
        url: server.url,
        bodies: data.bodies,
        spanCounts: data.spanCounts,
        concurrency: 2,
        maxRequests: data.bodies.length,
        maxSeconds: 30,
      });
      expect(load.acceptedSpans).toBe(httpSpanCount(data));
      const file = join(server.dataDir, 'spans.jsonl');
      // groupbytrace releases a trace 500 ms after its last span; the file exporter then writes it.
      const stopAt = Date.now() + 20_000;
      let spans = 0;
      while (Date.now() < stopAt) {
        if (existsSync(file)) {
          const whole = readFileSync(file, 'utf8').split('\n').slice(0, -1); // only complete lines
          spans = whole.reduce((n, line) => n + (line.match(/"spanId"/g)?.length ?? 0), 0);
          if (spans >= load.acceptedSpans) break;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(spans).toBe(load.acceptedSpans);
      expect(readdirSync(join(server.dataDir, 'queue')).length).toBeGreaterThan(0);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
