import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Config, configSchema } from '../../src/config-schema.ts';
import { DecodeError } from '../../src/errors.ts';
import type { Finding } from '../../src/findings/schema.ts';
import { readOtlpFile } from '../../src/ingest/otlp/file.ts';
import type { FindingSink, FindingStream } from '../../src/sinks/finding-sink.ts';
import { SINKS } from '../../src/sinks/registry.ts';
import type { SinkDefinition } from '../../src/sinks/sink-definition.ts';
import { createLogger } from '../../src/telemetry/logger.ts';
import { buildTopology } from '../../src/topology/build.ts';

/** The trivial sink a new one starts from: keeps what it is given, in memory. */
class MemorySink implements FindingSink {
  readonly name = 'memory';
  readonly written: { stream: FindingStream; finding: Finding; tag: string }[] = [];
  readonly tag: string;
  constructor(tag: string) {
    this.tag = tag;
  }
  write(findings: readonly Finding[], stream: FindingStream): void {
    for (const finding of findings) this.written.push({ stream, finding, tag: this.tag });
  }
  backpressure(): string | undefined {
    return undefined;
  }
  backlog() {
    return { records: 0, bytes: 0 };
  }
  async flushed(): Promise<void> {}
  async close(): Promise<void> {}
}

// Adding a sink: this definition (in its own file) plus one line in SINKS.
const opened: MemorySink[] = [];
const memorySinkDefinition = {
  key: 'memory',
  name: 'memory',
  schema: z.strictObject({ tag: z.string().default('untagged') }),
  external: () => false,
  open: async (config) => {
    const sink = new MemorySink(config.tag);
    opened.push(sink);
    return { sink };
  },
} as const satisfies SinkDefinition<'memory', z.ZodType<{ tag: string }>>;
const WITH_MEMORY = [...SINKS, memorySinkDefinition] as const;

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

async function replayInto(sections: Record<string, unknown>, externalSinks: boolean) {
  const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-sink-registry-'));
  cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
  const config = configSchema(WITH_MEMORY).parse({ dataDir, sinks: sections });
  const findingsPath = join(dataDir, 'findings.jsonl');
  const { pipeline, running } = await buildTopology(
    config as Config,
    { clock: 'event', findings: { findingsPath, truncate: true }, externalSinks },
    { registry: undefined, logger: createLogger({ level: 'fatal', destination: { write: () => undefined } }) },
    WITH_MEMORY,
  );
  await running.start();
  const requests = await readOtlpFile('test/fixtures/frameworks/adk-legacy-latest.traces.pb.gz');
  if (requests instanceof DecodeError) throw requests;
  for (const r of requests) if (r.signal === 'traces') pipeline.accept(r.request);
  await pipeline.drain('end-of-input');
  const layer = running.layers[0]!.map((c) => c.name);
  await running.stop();
  const local = (await readFile(findingsPath, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { finding_id?: string });
  return { layer, local };
}

describe('the sink registry', () => {
  it("composes a registered sink's section under sinks.<key>, strict, defaults embedded", () => {
    const schema = configSchema(WITH_MEMORY);
    expect(schema.parse({}).sinks).not.toHaveProperty('memory');
    expect((schema.parse({ sinks: { memory: {} } }).sinks as Record<string, unknown>).memory).toEqual({ tag: 'untagged' });
    expect(schema.safeParse({ sinks: { memory: { bogus: 1 } } }).success).toBe(false);
  });

  it('opens a configured sink in the first layer, after the local log, and every finding reaches it', async () => {
    opened.length = 0;
    const { layer, local } = await replayInto({ memory: { tag: 't1' } }, true);
    expect(layer).toEqual(['local-log', 'memory']);
    expect(opened).toHaveLength(1);
    const reached = opened[0]!.written;
    const localFindings = local.filter((r) => r.finding_id !== undefined).map((r) => r.finding_id);
    expect(localFindings.length).toBeGreaterThan(0);
    expect(reached.map((w) => w.finding.finding_id)).toEqual(localFindings);
    expect(reached.every((w) => w.tag === 't1')).toBe(true);
  });

  it('leaves a sink without its section, or a plan without external sinks, closed', async () => {
    opened.length = 0;
    expect((await replayInto({}, true)).layer).toEqual(['local-log']);
    expect((await replayInto({ memory: {} }, false)).layer).toEqual(['local-log']);
    expect(opened).toHaveLength(0);
  });
});
