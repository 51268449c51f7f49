import { readdirSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AssemblerLimitsSchema } from '../../../src/assemble/limits.ts';
import { checksConfigSchema } from '../../../src/checks/config.ts';
import { DurableIngest } from '../../../src/ingest/wal/durable-ingest.ts';
import { KafkaSourceConfigSchema } from '../../../src/ingest/kafka/config.ts';
import { ReceiverConfigSchema } from '../../../src/ingest/otlp/receiver-config.ts';
import { SpanWal } from '../../../src/ingest/wal/span-wal.ts';
import { JudgeConfigSchema } from '../../../src/judge/config.ts';
import { DecisionPoints } from '../../../src/judge/decision-points.ts';
import { Pipeline } from '../../../src/pipeline/pipeline.ts';
import { AudienceRefusals } from '../../../src/sinks/audience-refusals.ts';
import { JsonlLog } from '../../../src/sinks/jsonl-log.ts';
import { LocalLogSink } from '../../../src/sinks/local-log-sink.ts';
import { silentLogger } from '../../../src/telemetry/logger.ts';
import { audienceRefusalsComponent } from '../../../src/topology/components/audience-refusals.ts';
import { FileFollower } from '../../../src/topology/components/file-follower.ts';
import { FileSourceComponent } from '../../../src/topology/components/file-source.ts';
import { GrpcServerComponent } from '../../../src/topology/components/grpc-server.ts';
import { HttpServerComponent } from '../../../src/topology/components/http-server.ts';
import { judgeComponent } from '../../../src/topology/components/judge.ts';
import { KafkaSourceComponent } from '../../../src/topology/components/kafka-source.ts';
import { PipelineStage } from '../../../src/topology/components/pipeline-stage.ts';
import { RepartitionComponent } from '../../../src/topology/components/repartition.ts';
import { sinkComponent } from '../../../src/topology/components/sink.ts';
import { SpanWalComponent } from '../../../src/topology/components/span-wal.ts';
import { TopicFollower } from '../../../src/topology/components/topic-follower.ts';
import { trajectoryLogComponent } from '../../../src/topology/components/trajectory-log.ts';
import { type LifecycleCase, runLifecycleContract } from '../../contracts/component-lifecycle.contract.ts';
import { Kafka } from 'kafkajs';

const dir = (name: string) => mkdtemp(join(tmpdir(), `trajwatch-lifecycle-${name}-`));

const pipeline = () =>
  new Pipeline({
    limits: AssemblerLimitsSchema.parse({}),
    clock: 'arrival',
    analyze: () => ({ checks: { l0: [], repetition: { status: 'unavailable', reasons: ['not analyzed'] }, silenced: [] }, findings: [] }),
    sinks: [],
  });

const receiver = ReceiverConfigSchema.parse({ otlpHttp: '127.0.0.1:0', otlpGrpc: '127.0.0.1:0' });
// Never contacted: these cases build Kafka clients and stop them unstarted.
const kafkaSource = KafkaSourceConfigSchema.parse({ brokers: ['127.0.0.1:1'], topic: 'lifecycle', sessions: { enabled: true } });

/**
 * One case per file of `src/topology/components/`, named by the file. Listeners and Kafka
 * clients are built and stopped, not started, here: starting needs a socket or a broker
 * (their own tests: test/topology/components.test.ts, test/ingest/kafka/).
 */
const CASES: Record<string, LifecycleCase> = {
  'audience-refusals': {
    startable: true,
    build: async () => audienceRefusalsComponent(new AudienceRefusals(await JsonlLog.open(join(await dir('refusals'), 'refused.jsonl')))),
  },
  'file-source': {
    // Started, it feeds its (here no) files and ends the input once; no file, socket or broker.
    startable: true,
    build: async () => new FileSourceComponent([], pipeline(), { endOfInput: async () => {} }, { failed: () => {}, note: () => {}, progress: () => {} }),
  },
  'file-follower': {
    startable: true,
    build: async () => {
      const path = join(await dir('follow'), 'findings.jsonl');
      await writeFile(path, '{"a":1}\n');
      return new FileFollower(path, true, () => true);
    },
  },
  'grpc-server': {
    startable: false,
    build: async () => new GrpcServerComponent(receiver, receiver.otlpGrpc, pipeline(), () => {}, silentLogger()),
  },
  'http-server': {
    startable: false,
    build: async () => new HttpServerComponent({ config: receiver, target: pipeline(), observe: () => {}, routes: {}, otlp: true, logger: silentLogger() }),
  },
  judge: {
    startable: true,
    build: async () =>
      judgeComponent(
        await DecisionPoints.open(await dir('judge'), JudgeConfigSchema.parse({}), { checks: checksConfigSchema.parse({}), onFindings: () => undefined }),
      ),
  },
  'kafka-source': {
    startable: false,
    build: async () => new KafkaSourceComponent(kafkaSource, pipeline(), undefined, silentLogger()),
  },
  'pipeline-stage': {
    startable: true,
    build: async () => new PipelineStage(pipeline(), 10),
  },
  repartition: {
    startable: false,
    build: async () => new RepartitionComponent(kafkaSource, pipeline(), undefined, silentLogger()),
  },
  sink: {
    startable: true,
    build: async () => sinkComponent(await LocalLogSink.open(await dir('sink'), 1 << 20)),
  },
  'span-wal': {
    startable: true,
    build: async () => {
      const { wal, records } = await SpanWal.open(await dir('wal'), receiver.wal);
      return new SpanWalComponent(new DurableIngest(pipeline(), wal), records, silentLogger(), receiver.wal.maxBytes);
    },
  },
  'topic-follower': {
    startable: false,
    build: async () => new TopicFollower(new Kafka({ brokers: ['127.0.0.1:1'], logCreator: () => () => {} }), 'lifecycle', true, () => true),
  },
  'trajectory-log': {
    startable: true,
    build: async () => trajectoryLogComponent(await JsonlLog.open(join(await dir('trajectories'), 'trajectories.jsonl')), 1 << 20),
  },
};

/** Files of the folder that hold no component: helpers the builder calls around one. */
const NOT_COMPONENTS: Record<string, string> = {
  'revision-memory': 'opens and restores the revision log; its component is the `sink` case (RevisionMemorySink)',
};

for (const [name, c] of Object.entries(CASES)) runLifecycleContract(name, c);

describe('lifecycle contract coverage', () => {
  it('runs over every file of src/topology/components/', () => {
    const files = readdirSync(new URL('../../../src/topology/components/', import.meta.url)).map((f) => f.replace(/\.ts$/, ''));
    expect(files.filter((f) => !(f in CASES) && !(f in NOT_COMPONENTS))).toEqual([]);
    expect([...Object.keys(CASES), ...Object.keys(NOT_COMPONENTS)].filter((f) => !files.includes(f))).toEqual([]);
  });
});
