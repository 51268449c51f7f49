/**
 * The shipped stack, described once: agent → Collector (traces and logs, OTLP in) → Kafka
 * (keyed by trace id) → two `trajwatch serve --source kafka` members (one consumer group, the
 * session repartition) → findings to Kafka and as OTLP evaluation events back into the
 * Collector (file exporter) → Prometheus (both members, the alert rules) → Alertmanager; Grafana
 * in compose only. docker-compose.yml and the generated config files are rendered from this
 * (compose.ts, with the compose mapping); `npm run stack -- up` starts the same services as
 * processes (runner.ts, with the local mapping). Every address, path and topic goes through a
 * {@link Mapping}, never a literal.
 */
import { posix } from 'node:path';
import type { Mapping, PortTable } from './mapping.ts';

/** What runs a service on this machine (runner.ts knows how to start and probe each). */
export type LocalProgram = 'kafka-broker' | 'otelcol' | 'trajwatch' | 'prometheus' | 'alertmanager';

/** A file the service reads: mounted from the repo in compose, written under the state directory locally. */
export interface ServiceFile {
  /** The repo file: checked in, and generated from `render` when it has one (compose.ts). */
  repo: string;
  /** Where the service reads it (the container path; its base name names the local copy). */
  at: string;
  /** The file's content (written as YAML by yaml-file.ts). */
  render?: (m: Mapping) => Record<string, unknown>;
}

export interface Service {
  name: string;
  /** The container's listeners by name. */
  ports: Record<string, number>;
  /** Compose `ports:` publishing, by listener name (host side). */
  publish?: Record<string, string>;
  files: ServiceFile[];
  /** Writable directories: a named volume in compose (when `volume`), `<state>/<service>/<base>` locally. */
  dirs: { at: string; volume?: string }[];
  /** Arguments after the image's entrypoint (compose `command:`) and after the local program. */
  args: (m: Mapping) => string[];
  dependsOn: Record<string, 'service_started' | 'service_healthy' | 'service_completed_successfully'>;
  /** Absent: compose only (Grafana). */
  local?: LocalProgram;
  /** How `up` knows it is ready: an HTTP GET answering 2xx, or a line in its output (local services only). */
  ready?: { http: { port: string; path: string } } | { log: string } | { kafka: true };
  /** Compose-only keys (image, build, environment, healthcheck, restart). */
  compose: Record<string, unknown>;
}

/** Shipped Kafka names (suffixed per run by the local mapping when the broker is shared). */
export const NAMES = {
  spans: 'otlp_spans',
  logs: 'otlp_logs',
  group: 'trajwatch',
  deadLetter: 'otlp_spans.dlq',
  sessions: 'trajwatch.sessions',
  findings: 'trajwatch.findings',
  alarms: 'trajwatch.alarms',
} as const;

/** Partitions of the topics the Collector writes (and of the repartition topic). */
export const PARTITIONS = 6;

/**
 * Topics the stack creates before any member starts, all with {@link PARTITIONS}: the Collector's
 * (spans and logs need equal counts), the repartition's, the dead-letter and the sink's. The
 * members could create the last four themselves, but two starting at once on a fresh broker race
 * (one saw UNKNOWN_TOPIC_OR_PARTITION preparing the sessions topic).
 */
export const TOPICS: readonly string[] = [NAMES.spans, NAMES.logs, NAMES.sessions, NAMES.deadLetter, NAMES.findings, NAMES.alarms];

/** The version scripts/setup/kafka/broker.sh runs here. */
const KAFKA_IMAGE = 'apache/kafka:4.4.0';
export const COLLECTOR_IMAGE = 'otel/opentelemetry-collector-contrib:0.165.0';
const COLLECTOR = 'otel-collector';
const COLLECTOR_DATA = '/var/lib/otelcol';
/** The file exporter's output: the evaluation events trajwatch sends back in. */
export const EVALUATIONS_FILE = 'evaluations.jsonl';
export const MEMBERS = ['trajwatch-1', 'trajwatch-2'] as const;

const hostPort = (address: string): { host: string; port: number } => {
  const i = address.lastIndexOf(':');
  return { host: address.slice(0, i), port: Number(address.slice(i + 1)) };
};

/** The Collector: OTLP in for agents, traces and logs to Kafka keyed by trace id; evaluation events in on their own receiver, to a file. */
export function collectorConfig(m: Mapping): Record<string, unknown> {
  const metrics = hostPort(m.listen(COLLECTOR, 'metrics'));
  const retry = { enabled: true, max_elapsed_time: '300s' };
  return {
    receivers: {
      otlp: { protocols: { grpc: { endpoint: m.listen(COLLECTOR, 'otlpGrpc') }, http: { endpoint: m.listen(COLLECTOR, 'otlpHttp') } } },
      // Its own receiver: on the agents' one they would go to otlp_logs and back into trajwatch.
      'otlp/evaluations': { protocols: { http: { endpoint: m.listen(COLLECTOR, 'evaluations') } } },
    },
    processors: { batch: { send_batch_size: 512, timeout: '200ms' } },
    exporters: {
      kafka: {
        brokers: [m.addr('kafka', 'client')],
        traces: { topic: m.name(NAMES.spans), encoding: 'otlp_proto' },
        logs: { topic: m.name(NAMES.logs), encoding: 'otlp_proto' },
        // Record key = trace id for spans and log records alike: a trace's spans and its
        // content events land on one partition, so one group member sees the whole run.
        partition_traces_by_id: true,
        partition_logs_by_trace_id: true,
        producer: { required_acks: -1, compression: 'none' },
        retry_on_failure: retry,
        sending_queue: { enabled: true, queue_size: 1000 },
      },
      'file/evaluations': { path: posix.join(m.dir(COLLECTOR, COLLECTOR_DATA), EVALUATIONS_FILE), flush_interval: '1s' },
    },
    service: {
      pipelines: {
        traces: { receivers: ['otlp'], processors: ['batch'], exporters: ['kafka'] },
        logs: { receivers: ['otlp'], processors: ['batch'], exporters: ['kafka'] },
        'logs/evaluations': { receivers: ['otlp/evaluations'], exporters: ['file/evaluations'] },
      },
      telemetry: { metrics: { readers: [{ pull: { exporter: { prometheus: { host: metrics.host, port: metrics.port } } } }] } },
    },
  };
}

/** The direct path without Kafka (one trajwatch behind the Collector): shipped as an alternative, not in the stack. */
export function directCollectorConfig(): Record<string, unknown> {
  return {
    receivers: { otlp: { protocols: { grpc: { endpoint: '0.0.0.0:4317' }, http: { endpoint: '0.0.0.0:4318' } } } },
    processors: { batch: { send_batch_size: 512, timeout: '200ms' } },
    exporters: {
      'otlphttp/trajwatch': {
        // The exporter appends /v1/traces and /v1/logs.
        endpoint: 'http://trajwatch:4318',
        encoding: 'proto',
        compression: 'gzip',
        timeout: '10s',
        // trajwatch answers 429/503 under backpressure; the Collector then retries and queues.
        retry_on_failure: { enabled: true, initial_interval: '1s', max_interval: '30s', max_elapsed_time: '300s' },
        sending_queue: { enabled: true, queue_size: 1000 },
      },
    },
    service: {
      pipelines: {
        traces: { receivers: ['otlp'], processors: ['batch'], exporters: ['otlphttp/trajwatch'] },
        logs: { receivers: ['otlp'], processors: ['batch'], exporters: ['otlphttp/trajwatch'] },
      },
      telemetry: { metrics: { readers: [{ pull: { exporter: { prometheus: { host: '0.0.0.0', port: 8888 } } } }] } },
    },
  };
}

/** Both members' configuration: spans from Kafka with the repartition, findings to Kafka and to the Collector. */
export function trajwatchConfig(m: Mapping): Record<string, unknown> {
  const brokers = [m.addr('kafka', 'client')];
  return {
    source: {
      // OTLP receivers off: spans come from Kafka only; /metrics and /healthz stay.
      http: false,
      kafka: {
        brokers,
        topic: m.name(NAMES.spans),
        // The content events (prompts, tool arguments and results) the Collector writes beside the spans.
        logs: { enabled: true, topic: m.name(NAMES.logs) },
        groupId: m.name(NAMES.group),
        deadLetterTopic: m.name(NAMES.deadLetter),
        // A member that dies is noticed within 10 s and its partitions move to the other.
        sessionTimeoutMs: 10_000,
        heartbeatIntervalMs: 1_000,
        sessions: { topic: m.name(NAMES.sessions), partitions: PARTITIONS },
      },
    },
    sinks: {
      kafka: { brokers, topics: { findings: m.name(NAMES.findings), alarms: m.name(NAMES.alarms) }, createTopics: true },
      otlpEvaluations: { endpoint: `http://${m.addr(COLLECTOR, 'evaluations')}/v1/logs`, serviceName: 'trajwatch' },
    },
  };
}

export function prometheusConfig(m: Mapping): Record<string, unknown> {
  return {
    global: { scrape_interval: '15s', evaluation_interval: '15s' },
    // Beside this file (compose mounts both into /etc/prometheus/; `up` copies both).
    rule_files: ['alerts.yml'],
    alerting: { alertmanagers: [{ static_configs: [{ targets: [m.addr('alertmanager', 'web')] }] }] },
    scrape_configs: [
      // The dashboards select job="trajwatch": keep the name.
      { job_name: 'trajwatch', metrics_path: '/metrics', static_configs: [{ targets: MEMBERS.map((s) => m.addr(s, 'http')) }] },
      { job_name: 'otel-collector', static_configs: [{ targets: [m.addr(COLLECTOR, 'metrics')] }] },
      { job_name: 'prometheus', static_configs: [{ targets: [m.addr('prometheus', 'web')] }] },
    ],
  };
}

const member = (name: (typeof MEMBERS)[number], published: string): Service => ({
  name,
  ports: { http: 4318 },
  publish: { http: `127.0.0.1:${published}` },
  files: [{ repo: 'deploy/trajwatch/config.yaml', at: '/etc/trajwatch/config.yaml', render: trajwatchConfig }],
  dirs: [{ at: '/data', volume: `${name}-data` }],
  args: (m) => [
    'serve',
    '--source',
    'kafka',
    '--config',
    m.file(name, '/etc/trajwatch/config.yaml'),
    '--otlp-http',
    m.listen(name, 'http'),
    '--data-dir',
    m.dir(name, '/data'),
  ],
  dependsOn: { kafka: 'service_healthy', 'kafka-topics': 'service_completed_successfully', [COLLECTOR]: 'service_started' },
  local: 'trajwatch',
  ready: { http: { port: 'http', path: '/healthz' } },
  // The image's HEALTHCHECK (GET /healthz) decides `service_healthy`.
  compose: { build: { context: '.', dockerfile: 'Dockerfile' }, image: 'trajwatch:local', restart: 'unless-stopped' },
});

export const SERVICES: readonly Service[] = [
  {
    name: 'kafka',
    ports: { client: 9092 },
    files: [],
    dirs: [{ at: '/var/lib/kafka/data', volume: 'kafka-data' }],
    args: () => [],
    dependsOn: {},
    local: 'kafka-broker',
    ready: { kafka: true },
    compose: {
      image: KAFKA_IMAGE,
      environment: {
        KAFKA_NODE_ID: 1,
        KAFKA_PROCESS_ROLES: 'broker,controller',
        KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093',
        KAFKA_ADVERTISED_LISTENERS: 'PLAINTEXT://kafka:9092',
        KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
        KAFKA_CONTROLLER_QUORUM_VOTERS: '1@kafka:9093',
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: 1,
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: 1,
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: 1,
        KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: 0,
        KAFKA_NUM_PARTITIONS: PARTITIONS,
        // Topics are created on purpose (kafka-topics, the sinks' createTopics), never by a typo.
        KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
        KAFKA_LOG_DIRS: '/var/lib/kafka/data',
      },
      healthcheck: {
        test: ['CMD-SHELL', '/opt/kafka/bin/kafka-broker-api-versions.sh --bootstrap-server localhost:9092 >/dev/null 2>&1'],
        interval: '10s',
        timeout: '10s',
        retries: 12,
        start_period: '20s',
      },
    },
  },
  {
    // Compose only: `up` creates the same topics through the admin API (runner.ts).
    name: 'kafka-topics',
    ports: {},
    files: [],
    dirs: [],
    args: (m) => [
      '/bin/bash',
      '-c',
      TOPICS.map(
        (t) =>
          `/opt/kafka/bin/kafka-topics.sh --bootstrap-server ${m.addr('kafka', 'client')} --create --if-not-exists --topic ${m.name(t)} --partitions ${PARTITIONS}`,
      ).join(' && '),
    ],
    dependsOn: { kafka: 'service_healthy' },
    // One shot: no restart policy (compose's default, "no").
    compose: { image: KAFKA_IMAGE },
  },
  {
    name: COLLECTOR,
    ports: { otlpGrpc: 4317, otlpHttp: 4318, evaluations: 4320, metrics: 8888 },
    publish: { otlpGrpc: '4317', otlpHttp: '4318' },
    files: [{ repo: 'collector-config/to-kafka/config.yaml', at: '/etc/otelcol-contrib/config.yaml', render: collectorConfig }],
    dirs: [{ at: COLLECTOR_DATA, volume: 'otelcol-data' }],
    args: (m) => [`--config=${m.file(COLLECTOR, '/etc/otelcol-contrib/config.yaml')}`],
    dependsOn: { kafka: 'service_healthy', 'kafka-topics': 'service_completed_successfully' },
    local: 'otelcol',
    ready: { log: 'Everything is ready' },
    compose: { image: COLLECTOR_IMAGE, restart: 'unless-stopped' },
  },
  member('trajwatch-1', '4319'),
  member('trajwatch-2', '4329'),
  {
    name: 'prometheus',
    ports: { web: 9090 },
    publish: { web: '127.0.0.1:9090' },
    files: [
      { repo: 'deploy/prometheus/prometheus.yml', at: '/etc/prometheus/prometheus.yml', render: prometheusConfig },
      { repo: 'deploy/prometheus/alerts.yml', at: '/etc/prometheus/alerts.yml' },
    ],
    dirs: [{ at: '/prometheus', volume: 'prometheus-data' }],
    args: (m) => [
      `--config.file=${m.file('prometheus', '/etc/prometheus/prometheus.yml')}`,
      `--storage.tsdb.path=${m.dir('prometheus', '/prometheus')}`,
      '--storage.tsdb.retention.time=15d',
      '--enable-feature=exemplar-storage',
      `--web.listen-address=${m.listen('prometheus', 'web')}`,
    ],
    dependsOn: { 'trajwatch-1': 'service_started', 'trajwatch-2': 'service_started', alertmanager: 'service_started' },
    local: 'prometheus',
    ready: { http: { port: 'web', path: '/-/ready' } },
    compose: { image: 'prom/prometheus:v3.5.0', restart: 'unless-stopped' },
  },
  {
    name: 'alertmanager',
    ports: { web: 9093 },
    publish: { web: '127.0.0.1:9093' },
    files: [{ repo: 'deploy/alertmanager/alertmanager.yml', at: '/etc/alertmanager/alertmanager.yml' }],
    dirs: [{ at: '/alertmanager' }],
    args: (m) => [
      `--config.file=${m.file('alertmanager', '/etc/alertmanager/alertmanager.yml')}`,
      `--storage.path=${m.dir('alertmanager', '/alertmanager')}`,
      `--web.listen-address=${m.listen('alertmanager', 'web')}`,
      // One instance: no gossip port.
      '--cluster.listen-address=',
    ],
    dependsOn: {},
    local: 'alertmanager',
    ready: { http: { port: 'web', path: '/-/ready' } },
    compose: { image: 'prom/alertmanager:v0.28.1', restart: 'unless-stopped' },
  },
  {
    name: 'grafana',
    ports: { web: 3000 },
    publish: { web: '127.0.0.1:3000' },
    files: [
      { repo: 'dashboards/provisioning/datasources', at: '/etc/grafana/provisioning/datasources' },
      { repo: 'dashboards/provisioning/dashboards', at: '/etc/grafana/provisioning/dashboards' },
      { repo: 'dashboards/json', at: '/var/lib/grafana/dashboards/trajwatch' },
    ],
    dirs: [{ at: '/var/lib/grafana', volume: 'grafana-data' }],
    args: () => [],
    dependsOn: { prometheus: 'service_started' },
    ready: { http: { port: 'web', path: '/api/health' } },
    compose: {
      image: 'grafana/grafana:12.2.0',
      environment: {
        GF_SECURITY_ADMIN_USER: 'admin',
        GF_SECURITY_ADMIN_PASSWORD: 'admin',
        GF_USERS_ALLOW_SIGN_UP: 'false',
        GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH: '/var/lib/grafana/dashboards/trajwatch/coordinator-alarms.json',
      },
      restart: 'unless-stopped',
    },
  },
];

/** Every service's container ports, for the compose mapping. */
export const PORTS: PortTable = Object.fromEntries(SERVICES.map((s) => [s.name, s.ports]));

/** The services `up` starts, in dependency order. */
export const LOCAL_SERVICES: readonly Service[] = SERVICES.filter((s) => s.local !== undefined);
