/**
 * Runs one combination of the configuration matrix to its end: `trajwatch replay` over the
 * whole corpus, or real `trajwatch serve` processes (OTLP/HTTP, or two Kafka-source instances
 * with the repartition by session) fed the serve slice, waited on until they are quiet
 * (bounded: a combination that does not finish is a stall), then stopped with SIGTERM.
 * The judge's endpoint, when the judge is on, is a stand-in (test/judge/scripted-chat-server.ts):
 * no LLM runs here.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Admin, Kafka } from 'kafkajs';
import { kafkajsLogLevel, quietLogCreator } from '../../src/kafka/kafkajs-log.ts';
import { runCli } from '../helpers/cli.ts';
import { uniqueTopic } from '../helpers/kafka.ts';
import { OtlpLogReceiver } from '../helpers/otlp-log-receiver.ts';
import { type ServeProcess, startServe } from '../helpers/serve.ts';
import { waitFor } from '../helpers/serve-group.ts';
import { startScriptedServer, type ScriptedServer } from '../judge/scripted-chat-server.ts';
import { walkScript } from '../judge/walk/walk-harness.ts';
import { settledOn, startSessionMember } from '../repartition/session-group.ts';
import { configFor, type Endpoints, type RunCombination } from './combination.ts';
import { replayCorpus, serveSlice, type SliceRequest } from './corpus.ts';

/** How long a combination may take to take in its input and go quiet before it counts as stalled. */
export const QUIET_BOUND_MS = 90_000;
/** Polls in a row with nothing changed (and nothing open or in a backlog) that make a run quiet. */
const QUIET_POLLS = 3;
/**
 * Short, so each run closes what it holds within seconds: a session, or a trace without a root
 * span, closes on the idle timeout. Kafka's quiet period is the sessions
 * tests' (stage 2 waits for every trace of a session forwarded by stage 1).
 */
const HTTP_ASSEMBLER = { quietPeriodMs: 300, idleTimeoutMs: 2_000 };
const KAFKA_ASSEMBLER = { quietPeriodMs: 1_000, idleTimeoutMs: 2_000 };
const POLL_MS = 500;

/** One data directory a combination wrote, with the configuration file it ran with. */
export interface Output {
  dataDir: string;
  configPath: string;
}

export interface RunResult {
  outputs: Output[];
  /** What the input held (spans; requests for serve). */
  spansSent: number;
  requestsSent: number;
  /** Status of every request answered (serve over HTTP). */
  statuses: number[];
  /** Each instance's last /metrics before its stop (serve). */
  metrics: Samples[];
  /** Exit code of each process (replay, or each serve after SIGTERM). */
  exitCodes: (number | null)[];
  /** What each process printed. */
  outputText: string[];
  /** Milliseconds from the first input to quiet. */
  quietMs: number;
  /** Evaluation events the OTLP receiver got. */
  otlpRecords: number;
  /** Requests the judge's stand-in answered. */
  judgeRequests: number;
}

/** A scrape, parsed: `name{labels}` → value. */
export type Samples = Map<string, number>;

export function parseSamples(text: string): Samples {
  const out: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

/** The sum of every sample of `name` (all label sets). */
export function total(samples: Samples, name: string): number {
  let sum = 0;
  for (const [key, v] of samples) if (key === name || key.startsWith(`${name}{`)) sum += v;
  return sum;
}

/** Every non-zero sample of a refusal or dead-letter counter: input or output turned away. */
export function refusals(samples: Samples): string[] {
  return [...samples].filter(([key, v]) => v > 0 && /^trajwatch_[a-z_]*(refused_total|dead_letter_total)(\{|$)/.test(key)).map(([key, v]) => `${key} ${v}`);
}

async function scrape(member: ServeProcess): Promise<Samples> {
  return parseSamples(await (await fetch(`${member.url}/metrics`)).text());
}

/**
 * Waits until every span sent was taken in (`received` of the scrapes), nothing is open or in
 * a sink's backlog, and nothing changed for {@link QUIET_POLLS} polls; throws (a stall) past
 * {@link QUIET_BOUND_MS}, with the figures it last saw.
 */
async function untilQuiet(members: readonly ServeProcess[], spans: number, received: string, judge: ScriptedServer | undefined): Promise<Samples[]> {
  const deadline = Date.now() + QUIET_BOUND_MS;
  let last = '';
  let same = 0;
  for (;;) {
    const scrapes = await Promise.all(members.map(scrape));
    const sum = (name: string) => scrapes.reduce((n, s) => n + total(s, name), 0);
    const figures = {
      received: sum(received),
      open: sum('trajwatch_trajectories_open'),
      backlog: sum('trajwatch_sink_backlog_records'),
      closed: sum('trajwatch_trajectories_closed_total'),
      findings: sum('trajwatch_findings_total'),
      fates: sum('trajwatch_window_fates_total'),
      judge: judge?.requests.length ?? 0,
    };
    const now = JSON.stringify(figures);
    same = now === last ? same + 1 : 0;
    last = now;
    if (figures.received >= spans && figures.open === 0 && figures.backlog === 0 && same >= QUIET_POLLS) return scrapes;
    if (Date.now() > deadline) {
      throw new Error(
        `stalled: not quiet within ${QUIET_BOUND_MS} ms (${spans} spans sent): ${now}\n${members.map((m) => m.output().slice(-3000)).join('\n---\n')}`,
      );
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** The stand-in judge endpoint and the OTLP receiver a combination needs, closed by `close`. */
async function endpoints(c: RunCombination, brokers: string[] | undefined) {
  const model = c.judge === 'on' ? await startScriptedServer(walkScript()) : undefined;
  const otlp = c.sinks === 'otlp' || c.sinks === 'all' ? await OtlpLogReceiver.start() : undefined;
  const e: Endpoints = {
    ...(model === undefined ? {} : { modelUrl: model.baseUrl }),
    ...(otlp === undefined ? {} : { otlpUrl: otlp.url }),
    ...(brokers === undefined ? {} : { brokers, findingsTopic: uniqueTopic('matrix.findings') }),
  };
  const close = async () => {
    await model?.close();
    await otlp?.stop();
  };
  return { model, otlp, e, close };
}

/** `trajwatch replay` over the whole corpus into one data directory. */
export async function runReplay(c: RunCombination): Promise<RunResult> {
  const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-matrix-replay-'));
  const { model, e, close } = await endpoints(c, undefined);
  try {
    const configPath = join(dataDir, 'config.json');
    await writeFile(configPath, JSON.stringify(configFor(c, { ...e, dataDir })));
    const files = await replayCorpus(join(dataDir, 'gap-cases'));
    const started = Date.now();
    const out = join(dataDir, 'trajectories.jsonl');
    const run = await runCli(
      [
        'replay',
        ...files,
        '--trajectories',
        out,
        '--findings',
        join(dataDir, 'findings.jsonl'),
        '--alarms',
        join(dataDir, 'alarms.jsonl'),
        '--config',
        configPath,
      ],
      QUIET_BOUND_MS,
    );
    return {
      outputs: [{ dataDir, configPath }],
      spansSent: 0,
      requestsSent: files.length,
      statuses: [],
      metrics: [],
      exitCodes: [run.code],
      outputText: [run.stdout + run.stderr],
      quietMs: Date.now() - started,
      otlpRecords: 0,
      judgeRequests: model?.requests.length ?? 0,
    };
  } finally {
    await close();
  }
}

async function post(url: string, r: SliceRequest): Promise<number> {
  const res = await fetch(`${url}/v1/${r.signal}`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: r.body });
  await res.arrayBuffer();
  return res.status;
}

/** One `trajwatch serve` fed the slice over OTLP/HTTP (traces and the logs capture). */
export async function runHttp(c: RunCombination, brokers: string[] | undefined): Promise<RunResult> {
  const { model, otlp, e, close } = await endpoints(c, brokers);
  const slice = serveSlice({ logs: true });
  const serve = await startServe({ assembler: HTTP_ASSEMBLER, ...configFor(c, e) }).catch(async (err: unknown) => {
    await close();
    throw err;
  });
  try {
    const started = Date.now();
    const statuses = [];
    for (const r of slice) statuses.push(await post(serve.url, r));
    const spans = slice.reduce((n, r) => n + r.spans, 0);
    const [metrics] = await untilQuiet([serve], spans, 'trajwatch_spans_received_total', model);
    const quietMs = Date.now() - started;
    return {
      outputs: [{ dataDir: serve.dataDir, configPath: join(serve.dataDir, 'config.json') }],
      spansSent: spans,
      requestsSent: slice.length,
      statuses,
      metrics: [metrics!],
      exitCodes: [await serve.stop()],
      outputText: [serve.output()],
      quietMs,
      otlpRecords: otlp?.records.length ?? 0,
      judgeRequests: model?.requests.length ?? 0,
    };
  } finally {
    await serve.stop();
    await close();
  }
}

/**
 * Creates `topics` and waits (bounded) until every partition names a leader. A loaded broker
 * answers metadata for a topic it just created with UNKNOWN_TOPIC_OR_PARTITION for a while,
 * which kafkajs's own `waitForLeaders` does not retry: asked again here until it knows.
 */
async function createLed(admin: Admin, topics: string[], partitions: number): Promise<void> {
  // kafkajs waits for leaders unless told not to, and gives up at the first such answer.
  await admin.createTopics({ topics: topics.map((topic) => ({ topic, numPartitions: partitions })), waitForLeaders: false });
  let last: unknown;
  const led = async () => {
    try {
      const { topics: meta } = await admin.fetchTopicMetadata({ topics });
      return meta.every((t) => t.partitions.length === partitions && t.partitions.every((p) => p.leader >= 0));
    } catch (err) {
      last = err;
      return false;
    }
  };
  if (!(await waitFor(led, QUIET_BOUND_MS))) throw new Error(`the topics ${topics.join(', ')} have no leader for every partition`, { cause: last });
}

const KAFKA_INSTANCES = 2;
const SOURCE_PARTITIONS = 6;

/** Two `trajwatch serve --source kafka` instances (stage 1 by trace, stage 2 by session) fed the slice's traces as records. */
export async function runKafka(c: RunCombination, brokers: string[]): Promise<RunResult> {
  const { model, otlp, e, close } = await endpoints(c, brokers);
  const kafka = new Kafka({ clientId: 'matrix-test', brokers, logLevel: kafkajsLogLevel('nothing'), logCreator: quietLogCreator('nothing') });
  const admin = kafka.admin();
  const producer = kafka.producer();
  await Promise.all([admin.connect(), producer.connect()]);
  let members: ServeProcess[] = [];
  try {
    const topic = uniqueTopic('matrix.spans');
    const sessionsTopic = `${topic}.sessions`;
    // The topics made here, before the members start, each partition led: two members creating the
    // same topic at once, or consuming one whose leaders are not known yet, fail at start.
    await createLed(admin, [topic, sessionsTopic], SOURCE_PARTITIONS);
    if (e.findingsTopic !== undefined) await createLed(admin, [e.findingsTopic, `${e.findingsTopic}.alarms`], 1);
    const groupId = uniqueTopic('trajwatch-matrix');
    const extra = { assembler: KAFKA_ASSEMBLER, ...configFor(c, e) };
    // Settled, not all: a member that failed to start must not leave the other one running.
    const starts = await Promise.allSettled(
      Array.from({ length: KAFKA_INSTANCES }, () => startSessionMember({ brokers, topic, groupId, sessionsTopic, extra })),
    );
    members = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = starts.find((s) => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    if (!(await waitFor(() => settledOn(members, [topic, sessionsTopic], SOURCE_PARTITIONS), QUIET_BOUND_MS))) {
      throw new Error(`the group did not settle:\n${members.map((m) => m.output().slice(-3000)).join('\n---\n')}`);
    }
    const slice = serveSlice({ logs: false });
    const started = Date.now();
    await producer.send({ topic, acks: -1, messages: slice.map((r) => ({ key: r.key, value: r.body })) });
    const spans = slice.reduce((n, r) => n + r.spans, 0);
    const metrics = await untilQuiet(members, spans, 'trajwatch_kafka_source_spans_total', model);
    const quietMs = Date.now() - started;
    const exitCodes = await Promise.all(members.map((m) => m.stop()));
    return {
      outputs: members.map((m) => ({ dataDir: m.dataDir, configPath: join(m.dataDir, 'config.json') })),
      spansSent: spans,
      requestsSent: slice.length,
      statuses: [],
      metrics,
      exitCodes,
      outputText: members.map((m) => m.output()),
      quietMs,
      otlpRecords: otlp?.records.length ?? 0,
      judgeRequests: model?.requests.length ?? 0,
    };
  } finally {
    await Promise.all(members.map((m) => m.stop()));
    await Promise.all([admin.disconnect(), producer.disconnect()]);
    await close();
  }
}
