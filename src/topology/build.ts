import { createAnalyzer } from '../analyze.ts';
import { registerAssemblerMetrics } from '../assemble/assembler-metrics.ts';
import type { AssemblerStats, KeyBy } from '../assemble/assembler.ts';
import type { RevisionLog } from '../assemble/revision-log.ts';
import type { Config } from '../config-schema.ts';
import { deriveProvenance } from '../findings/provenance/derive.ts';
import type { FileSourceReport } from '../ingest/file-source.ts';
import { DurableIngest } from '../ingest/wal/durable-ingest.ts';
import type { PipelineInput } from '../ingest/pipeline-input.ts';
import { InflightBudget } from '../ingest/otlp/inflight-budget.ts';
import { connectionMetrics } from '../ingest/otlp/receiver-connection-metrics.ts';
import { receiverFaults } from '../ingest/otlp/receiver-faults.ts';
import { receiverMetrics, type RequestOutcome, type Transport } from '../ingest/otlp/receiver-metrics.ts';
import { SpanWal } from '../ingest/wal/span-wal.ts';
import { DecisionPoints } from '../judge/decision-points.ts';
import type { KafkaSourceConfig } from '../ingest/kafka/config.ts';
import { KAFKA_SESSIONS_SOURCE_PREFIX } from '../ingest/kafka/metrics.ts';
import type { Clock, PipelineOptions } from '../pipeline/options.ts';
import { Pipeline } from '../pipeline/pipeline.ts';
import { pipelineMetrics, registerLogOutcomeMetrics } from '../pipeline/metrics.ts';
import { registerAudienceRefusalMetrics } from '../sinks/audience-refusal-metrics.ts';
import { AudienceRefusals } from '../sinks/audience-refusals.ts';
import { anyExternal, withAudience } from '../sinks/audience-sink.ts';
import type { FindingSink } from '../sinks/finding-sink.ts';
import { JsonlLog } from '../sinks/jsonl-log.ts';
import { LocalLogSink } from '../sinks/local-log-sink.ts';
import { registerLocalLogMetrics } from '../sinks/local-log-metrics.ts';
import type { LocalLogsRetention } from '../sinks/log-retention-config.ts';
import { SINKS } from '../sinks/registry.ts';
import type { SinkDefinition } from '../sinks/sink-definition.ts';
import type { RevisionMemorySink } from '../sinks/revision-memory-sink.ts';
import { FaultLog } from '../telemetry/fault-log.ts';
import { levelLog, type Logger } from '../telemetry/logger.ts';
import { metricsEndpoint } from '../telemetry/metrics-endpoint.ts';
import type { MetricRegistry } from '../telemetry/metrics.ts';
import { registerBacklogMetrics } from './backlog-metrics.ts';
import type { Component } from './component.ts';
import { GrpcServerComponent } from './components/grpc-server.ts';
import { HttpServerComponent } from './components/http-server.ts';
import { judgeComponent } from './components/judge.ts';
import { FileSourceComponent } from './components/file-source.ts';
import { healthRoutes, type HealthSources } from './health-routes.ts';
import { JudgeHealth } from '../judge/judge-health.ts';
import { loadCertificates } from '../judge/certificate.ts';
import { underDataDir } from '../judge/config.ts';
import { KafkaSourceComponent } from './components/kafka-source.ts';
import { PipelineStage, TICK_MS } from './components/pipeline-stage.ts';
import { openRevisionMemory, restoreRevisionMemory } from './components/revision-memory.ts';
import { RepartitionComponent, sessionStageSourceConfig } from './components/repartition.ts';
import { audienceRefusalsComponent } from './components/audience-refusals.ts';
import { sinkComponent } from './components/sink.ts';
import { SpanWalComponent } from './components/span-wal.ts';
import { trajectoryLogComponent } from './components/trajectory-log.ts';
import { judgeCallMetrics, registerJudgeMetrics } from '../judge/metrics.ts';
import { RunningTopology } from './running.ts';
import { dataDirPaths } from '../core/data-dir.ts';

/** What to build: `serve` runs sources and the metrics endpoint into the data directory; `replay` writes the files it is given. */
export interface Plan {
  /** `arrival` (serve: the wall clock) or `event` (replay: the spans' own times). */
  clock: Clock;
  trajectoriesPath?: string;
  findings?: { findingsPath: string; alarmsPath?: string; truncate: boolean };
  /** Open the configured sinks (`sinks.<key>` of `SINKS`: Kafka, OTLP evaluation events) besides the local logs: serve does, replay does not. */
  externalSinks: boolean;
  /**
   * The sources and the HTTP server (serve). `http`: the OTLP/HTTP and gRPC receivers (and the
   * span WAL when `receiver.wal.enabled`); `kafka`: the Kafka source, feeding stage 1 of the
   * repartition by session (or, with `source.kafka.sessions.enabled` false, keying by trace).
   * The HTTP server runs either way, for `/metrics` and `/healthz`. Absent: no source, no server.
   */
  sources?: { http: boolean; kafka: boolean };
  /** Rotate and bound the local logs (serve); absent, they are kept whole (replay's outputs). */
  retention?: LocalLogsRetention;
  /** Recorded OTLP files fed in order, then the input ends (replay): a file source. */
  files?: { paths: readonly string[]; report: FileSourceReport };
}

/** The telemetry every component declares its series on and logs to; built first, handed down. */
export interface Telemetry {
  registry: MetricRegistry;
  logger: Logger;
}

/** A built topology: its components in layers (not started), and the pipeline that sources feed. */
export interface Topology {
  pipeline: Pipeline;
  running: RunningTopology;
  /** Whether a Kafka source runs (it commits below open trajectories on stop). */
  kafkaSource: boolean;
  /** Every record an external view refused, kept in the quarantine log (`replay` reports them). */
  audienceRefusals: AudienceRefusals;
  /** The judge's health as its calls show it (`serve` logs its start line; `/healthz` carries it). */
  judgeHealth: JudgeHealth;
  /** The file source when the plan names files (`done` says when they are read and the input ended). */
  files: FileSourceComponent | undefined;
}

/**
 * Builds every component from a validated configuration, in one place: opens the logs, the
 * sinks, the judge's ledger and the span WAL; creates the pipeline, the receivers and the
 * Kafka source; declares each one's series on `telemetry.registry`. Nothing runs until
 * `running.start()`. If building fails half-way, what was opened is closed again.
 *
 * @example
 * const { running } = await buildTopology(config, { clock: 'arrival', externalSinks: true, sources }, telemetry);
 * await running.start();
 * await running.stop(10_000);
 */
export async function buildTopology(config: Config, plan: Plan, telemetry: Telemetry, sinks: readonly SinkDefinition[] = SINKS): Promise<Topology> {
  const built: Component[] = [];
  const ctx: Context = { config, plan, ...telemetry, built, log: (component) => telemetry.logger.child({ component }), sinks };
  try {
    const outputs = await buildOutputs(ctx);
    const { pipeline, judge, stage, traceStage, judgeHealth } = await buildStage(ctx, outputs);
    const wal = await buildWal(ctx, pipeline);
    // With sessions repartitioned, the Kafka source feeds stage 1 (by trace), the receivers stage 2.
    const sessions = traceStage === undefined ? [] : traceStage.layers;
    const health: HealthSources = { judge: () => judgeHealth.report(), redactJudge: config.receiver.auth !== undefined };
    const sources = buildSources(ctx, traceStage?.pipeline ?? pipeline, wal?.ingest ?? pipeline, health);
    const files = plan.files === undefined ? undefined : keep(ctx, new FileSourceComponent(plan.files.paths, pipeline, stage, plan.files.report));
    const layers = [outputs.layer, [judge], wal === undefined ? [] : [wal], [stage], ...sessions, files === undefined ? sources : [...sources, files]];
    registerBacklogMetrics(ctx.registry, layers.flat());
    health.running = new RunningTopology(layers, telemetry.logger);
    return { pipeline, running: health.running, kafkaSource: plan.sources?.kafka === true, audienceRefusals: outputs.refusals, judgeHealth, files };
  } catch (err) {
    // Built is not started: each stop only closes what its build opened.
    for (const c of built.reverse()) await c.stop().catch(() => undefined);
    throw err;
  }
}

/** What every build step reads, and `built`, where each records what it opened. */
interface Context extends Telemetry {
  config: Config;
  plan: Plan;
  built: Component[];
  /** The logger of one component: the topology's, with its `component` name on every line. */
  log: (component: string) => Logger;
  /** The sink registry (`SINKS`; a test may add one). */
  sinks: readonly SinkDefinition[];
}

/** The configured sinks this plan opens, each with its section, in registry order. */
function configuredSinks(ctx: Context): { definition: SinkDefinition; config: unknown }[] {
  if (!ctx.plan.externalSinks) return [];
  const sections = ctx.config.sinks as Record<string, unknown>;
  return ctx.sinks.flatMap((definition) => (sections[definition.key] === undefined ? [] : [{ definition, config: sections[definition.key] }]));
}

function keep<C extends Component>(ctx: Context, c: C): C {
  ctx.built.push(c);
  return c;
}

/** What the first layer opened: its components, the findings sinks, the trajectory log, the audience quarantine, the revision memory. */
interface Outputs {
  layer: Component[];
  sinks: FindingSink[];
  trajectoryLog: JsonlLog | undefined;
  refusals: AudienceRefusals;
  memory: { sink: RevisionMemorySink; log: RevisionLog } | undefined;
}

/**
 * The trajectory log, the findings sinks (the local log, then each configured one of the
 * registry) and, in serve, the closed-revision memory after them (it writes once they are
 * durable): the first layer, closed last.
 */
async function buildOutputs(ctx: Context): Promise<Outputs> {
  const { config, plan } = ctx;
  const layer: Component[] = [];
  const sinks: FindingSink[] = [];
  const configured = configuredSinks(ctx);
  const refusals = await openRefusals(
    ctx,
    configured.some(({ definition, config }) => definition.external(config)),
  );
  const trajectoryLog =
    plan.trajectoriesPath === undefined
      ? undefined
      : await JsonlLog.open(plan.trajectoriesPath, { truncate: plan.clock === 'event', retention: plan.retention?.trajectories });
  if (trajectoryLog !== undefined) layer.push(keep(ctx, trajectoryLogComponent(trajectoryLog, config.sinks.maxPendingBytes)));
  const localLogs = trajectoryLog === undefined ? [] : [trajectoryLog];
  if (plan.findings !== undefined) {
    const { findingsPath, alarmsPath, truncate } = plan.findings;
    const { findings, alarms } = plan.retention ?? {};
    const logs = await LocalLogSink.openFiles(findingsPath, alarmsPath, config.sinks.maxPendingBytes, { truncate, findings, alarms });
    const local = withAudience(logs, config.sinks.localLog.audience, refusals);
    sinks.push(local);
    layer.push(keep(ctx, sinkComponent(local)));
    localLogs.push(...logs.logs());
  }
  registerLocalLogMetrics(ctx.registry, localLogs);
  for (const { definition, config: section } of configured) {
    const { sink, backlogLimit } = await definition.open(section, {
      outboxDir: dataDirPaths(config.dataDir).outbox(definition.name),
      log: levelLog(ctx.log(`sinks.${definition.name}`)),
      metrics: ctx.registry,
      refusals,
    });
    sinks.push(sink);
    layer.push(keep(ctx, sinkComponent(sink, backlogLimit)));
  }
  if (refusals.quarantinePath !== undefined) layer.push(keep(ctx, audienceRefusalsComponent(refusals)));
  const memory = plan.sources === undefined ? undefined : await openRevisionMemory(config, sinks, trajectoryLog);
  if (memory !== undefined) {
    sinks.push(memory.sink);
    layer.push(keep(ctx, sinkComponent(memory.sink)));
  }
  return { layer, sinks, trajectoryLog, refusals, memory };
}

/**
 * The process's refusals of external views. With some stream external, refused records are kept
 * whole in `<dataDir>/audience-refused.jsonl` (appended across runs); each sink's first refusal is
 * an error line of the `sinks.audience` logger, the rest are counted.
 */
async function openRefusals(ctx: Context, configuredExternal: boolean): Promise<AudienceRefusals> {
  const { config, plan } = ctx;
  const external = (plan.findings !== undefined && anyExternal(config.sinks.localLog.audience)) || configuredExternal;
  const log = ctx.log('sinks.audience');
  const refusals = new AudienceRefusals(external ? await JsonlLog.open(dataDirPaths(config.dataDir).audienceRefused) : undefined, levelLog(log));
  registerAudienceRefusalMetrics(ctx.registry, refusals);
  return refusals;
}

/** The judge (decision points, its ledger opened) and the pipeline that consults it. */
async function buildStage(
  ctx: Context,
  outputs: Outputs,
): Promise<{ pipeline: Pipeline; judge: Component; stage: PipelineStage; traceStage: TraceStage | undefined; judgeHealth: JudgeHealth }> {
  const { config, plan, registry } = ctx;
  const observed = pipelineMetrics(registry);
  const judgeErrors = new FaultLog(ctx.log('judge'), 'judge failure');
  const certificates = config.judge.enabled ? (await loadCertificates(underDataDir(config.dataDir, config.judge.certificatesDir))).size : 0;
  const judgeHealth = new JudgeHealth(ctx.log('judge'), config.judge, certificates);
  const callMetrics = judgeCallMetrics(config.judge.enabled ? registry : undefined);
  const provenance = (t: Parameters<typeof deriveProvenance>[0]) => deriveProvenance(t, config.provenance);
  const decisions = await DecisionPoints.open(config.dataDir, config.judge, {
    // The one back edge: judged findings re-enter the pipeline's output (counted, then to every
    // sink). It is only called from work `consider` queued, so after the pipeline below exists.
    onFindings: (findings, alarms) => pipeline.emitJudged(findings, alarms),
    // Judge series exist only when the judge runs: dashboards read their absence.
    onCall: (call) => {
      callMetrics(call);
      judgeHealth.observe(call);
    },
    // Every fault is counted by the judge (`stats().faults`); the log says when one part starts failing.
    onFault: (fault) => judgeErrors.fault(fault.part, { message: fault.message, err: fault.error }),
    checks: config.checks,
    provenance,
  });
  const judge = keep(ctx, judgeComponent(decisions, judgeHealth));
  if (decisions.enabled) registerJudgeMetrics(registry, () => decisions.stats());
  const repartition = plan.sources?.kafka === true && config.source.kafka?.sessions.enabled === true ? config.source.kafka : undefined;
  const analyze = createAnalyzer(config, (issue) => observed.onProvenanceIssue(issue));
  const pipelineOptions = (keyBy: KeyBy): PipelineOptions => ({
    limits: config.assembler,
    clock: plan.clock,
    keyBy,
    analyze,
    provenance,
    decisions,
    ...(outputs.trajectoryLog === undefined ? {} : { trajectoryLog: outputs.trajectoryLog }),
    maxPendingTrajectoryBytes: config.sinks.maxPendingBytes,
    trajectoryLlmInput: config.sinks.trajectoryLlmInput,
    sinks: outputs.sinks,
    // Input is refused for what the output components report, as /healthz shows it.
    downstream: outputs.layer,
    onTrajectory: observed.onTrajectory,
    onManifest: observed.onManifest,
    onDurable: observed.onDurable,
    onJudged: observed.onJudged,
  });
  // Kafka without the repartition keys by trace (a session's traces may be on other partitions).
  const pipeline = new Pipeline({
    ...pipelineOptions(plan.sources?.kafka === true && repartition === undefined ? 'trace' : 'session'),
    ...(outputs.memory === undefined ? {} : { revisionMemory: outputs.memory.sink }),
  });
  if (outputs.memory !== undefined) {
    await restoreRevisionMemory(outputs.memory.log, pipeline.assembler, ctx.log('revision-memory'), {
      priorData: (outputs.trajectoryLog?.disk.fileBytes ?? 0) > 0,
      // Its line is written before the WAL (or a Kafka offset) lets go of the revision's spans.
      walCoversTail: (plan.sources?.http === true && config.receiver.wal.enabled) || plan.sources?.kafka === true,
    });
  }
  const tickMs = plan.clock === 'arrival' ? TICK_MS : undefined;
  const traceStage = repartition === undefined ? undefined : buildTraceStage(ctx, repartition, pipeline, pipelineOptions('trace'), tickMs);
  const assemblers = traceStage === undefined ? [pipeline] : [pipeline, traceStage.pipeline];
  registerAssemblerMetrics(registry, () => sumAssemblerStats(assemblers.map((p) => p.assembler.stats())));
  registerLogOutcomeMetrics(registry, () => pipeline.logOutcomes());
  const stage = keep(ctx, new PipelineStage(pipeline, tickMs));
  return { pipeline, judge, stage, traceStage, judgeHealth };
}

/** Stage 1 of the repartition: its pipeline (by trace), and the layers above stage 2's pipeline. */
interface TraceStage {
  pipeline: Pipeline;
  /** The repartition (topics, forwarder), stage 2's consumer, stage 1's pipeline: started in this order. */
  layers: Component[][];
}

/**
 * Sessions at any scale (docs/scaling-out.md §4): `sessions` is stage 2 (by session, fed from
 * the internal topic); stage 1, built here, assembles by trace what the Kafka source reads and
 * forwards each closed trace that names a session; a trace naming none is analyzed by stage 1.
 */
function buildTraceStage(ctx: Context, config: KafkaSourceConfig, sessions: Pipeline, options: PipelineOptions, tickMs: number | undefined): TraceStage {
  const repartition = keep(ctx, new RepartitionComponent(config, sessions, ctx.registry, ctx.log('repartition')));
  // Stage 2's pipeline stops after stage 1's: stage 1 must not shut the judge down under it (the judge component closes it last).
  const judge = options.decisions;
  const decisions =
    judge === undefined
      ? {}
      : { decisions: { consider: judge.consider.bind(judge), drain: () => judge.drain(), beginShutdown: () => {}, close: async () => {} } };
  const traces = new Pipeline({ ...options, ...decisions, forward: repartition.forwarder });
  const stage2Source = keep(
    ctx,
    new KafkaSourceComponent(sessionStageSourceConfig(config), repartition.sessions.input, ctx.registry, ctx.log('source.kafka.sessions'), {
      name: 'source.kafka.sessions',
      reader: repartition.sessions.reader,
      metricsPrefix: KAFKA_SESSIONS_SOURCE_PREFIX,
    }),
  );
  const stage1 = keep(ctx, new PipelineStage(traces, tickMs, 'pipeline.traces'));
  return { pipeline: traces, layers: [[repartition], [stage2Source], [stage1]] };
}

/** Both stages' assemblers as one, for the assembler's gauges. */
function sumAssemblerStats(all: AssemblerStats[]): AssemblerStats {
  const [first, ...rest] = all;
  const sum = { ...first!, contentEvents: { ...first!.contentEvents } };
  for (const s of rest) {
    sum.openTrajectories += s.openTrajectories;
    sum.bufferedBytes += s.bufferedBytes;
    sum.retainedBytes += s.retainedBytes;
    sum.duplicateSpans += s.duplicateSpans;
    sum.conflictingSpans += s.conflictingSpans;
    sum.lateSpans += s.lateSpans;
  }
  return sum;
}

/** The span WAL in front of the pipeline (serve, HTTP source, `receiver.wal.enabled`): opened now, replayed at start. */
async function buildWal(ctx: Context, pipeline: Pipeline): Promise<SpanWalComponent | undefined> {
  const { config, plan } = ctx;
  if (plan.sources?.http !== true || !config.receiver.wal.enabled) return undefined;
  const opened = await SpanWal.open(dataDirPaths(config.dataDir).spanWal, config.receiver.wal);
  return keep(ctx, new SpanWalComponent(new DurableIngest(pipeline, opened.wal), opened.records, ctx.log('span-wal'), config.receiver.wal.maxBytes));
}

/**
 * The HTTP server (OTLP/HTTP receiver and/or the metrics endpoint), the gRPC receiver and the
 * Kafka source. The receivers feed `target` (the WAL when on); the Kafka source the pipeline.
 */
function buildSources(ctx: Context, pipeline: Pipeline, target: PipelineInput, health: HealthSources): Component[] {
  const { config, registry } = ctx;
  const sources = ctx.plan.sources;
  if (sources === undefined) return [];
  if (registry === undefined) throw new Error('buildTopology: a plan with sources serves /metrics and needs a registry');
  const requests = receiverMetrics(registry);
  const observe = (transport: Transport, log: Logger) => {
    const faults = receiverFaults(log);
    return (o: RequestOutcome) => {
      requests.observe(transport, o);
      faults(o);
    };
  };
  const layer: Component[] = [];
  const budget = new InflightBudget(config.receiver.maxInflightBytes);
  const connections = connectionMetrics(registry, budget);
  const httpLogger = ctx.log(sources.http ? 'receiver.http' : 'metrics-endpoint');
  const http = new HttpServerComponent({
    config: config.receiver,
    target,
    observe: observe('http', httpLogger),
    routes: { ...metricsEndpoint(registry), ...healthRoutes(health) },
    otlp: sources.http,
    logger: httpLogger,
    budget,
    connections: connections('http', httpLogger),
  });
  layer.push(keep(ctx, http));
  if (sources.http) {
    const grpcLogger = ctx.log('receiver.grpc');
    const shared = { budget, connections: connections('grpc', grpcLogger) };
    layer.push(
      keep(
        ctx,
        new GrpcServerComponent(config.receiver, config.receiver.otlpGrpc, target, observe('grpc', grpcLogger), grpcLogger, config.receiver.tls, shared),
      ),
    );
  }
  if (sources.kafka) {
    if (config.source.kafka === undefined) throw new Error('buildTopology: sources.kafka needs config.source.kafka');
    layer.push(keep(ctx, new KafkaSourceComponent(config.source.kafka, pipeline, registry, ctx.log('source.kafka'))));
  }
  return layer;
}
