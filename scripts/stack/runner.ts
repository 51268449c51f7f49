/**
 * `up`, `status` and `down`: the stack description's services as processes on this machine,
 * with the local mapping (loopback, a free port per listener, files under the state directory).
 * Every process is started detached with its output in `<state>/<service>/<service>.log`, its
 * pid in `<state>/state.json`; `down` stops exactly those pids (TERM, bounded, then KILL).
 */
import { execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, open, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { kafkaClient } from '../../src/kafka/client.ts';
import { KafkaConnectionSchema } from '../../src/kafka/config.ts';
import { ensureTopics } from '../../src/kafka/topics.ts';
import { configText } from './compose.ts';
import { LOCAL_SERVICES, PARTITIONS, type Service, TOPICS } from './description.ts';
import { localMapping, type Mapping } from './mapping.ts';
import { ownsPid, type RunningService, readState, type StackState, stateFile, writeState } from './state.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const CLI = join(ROOT, 'src/cli/main.ts');
const BROKER = join(ROOT, 'scripts/setup/kafka/broker.sh');
/** Bounds: a service's readiness, a stop's grace before KILL, a cold Collector build. */
const READY_TIMEOUT_MS = 90_000;
const STOP_GRACE_MS = 15_000;
const BUILD_TIMEOUT_MS = 900_000;

export interface UpOptions {
  stateDir: string;
  /** An existing broker to use (not started, not stopped); absent: `up` starts one of its own. */
  kafka?: string[];
  /** Suffix for topic and group names (a shared broker); empty: the shipped names. */
  suffix?: string;
  /** Top-level sections added to the members' configuration (e.g. a judge): said by `up`, never silent. */
  memberConfig?: Record<string, unknown>;
  log?: (line: string) => void;
}

/** A loopback port free a moment ago; with `pair`, the next one is free too (the broker's controller). */
function freePort(pair = false): Promise<number> {
  const probe = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        const chosen = (server.address() as { port: number }).port;
        server.close(() => resolve(chosen));
      });
    });
  return probe(0).then(async (port) =>
    pair
      ? probe(port + 1).then(
          () => port,
          () => freePort(true),
        )
      : port,
  );
}

/** The local services in dependency order (the description's depends_on, compose-only services left out). */
export function startOrder(services: readonly Service[] = LOCAL_SERVICES): Service[] {
  const names = new Set(services.map((s) => s.name));
  const done = new Set<string>();
  const out: Service[] = [];
  while (out.length < services.length) {
    const next = services.find((s) => !done.has(s.name) && Object.keys(s.dependsOn).every((d) => done.has(d) || !names.has(d)));
    if (next === undefined) throw new Error('stack description: depends_on has a cycle');
    done.add(next.name);
    out.push(next);
  }
  return out;
}

async function waitUntil(what: string, ok: () => Promise<boolean>, alive: () => Promise<boolean>, logPath: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (await ok()) return;
    const tail = async () => (await readFile(logPath, 'utf8').catch(() => '')).split('\n').slice(-30).join('\n');
    if (!(await alive())) throw new Error(`stack: ${what} exited while starting; its log (${logPath}):\n${await tail()}`);
    if (Date.now() > deadline) throw new Error(`stack: ${what} not ready within ${READY_TIMEOUT_MS / 1000} s; its log (${logPath}):\n${await tail()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const httpOk = async (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
    (r) => r.ok,
    () => false,
  );

/** The program and arguments that run `s` here. */
async function commandOf(s: Service, m: Mapping): Promise<[string, string[]]> {
  const args = s.args(m);
  switch (s.local) {
    case 'trajwatch':
      return [process.execPath, [CLI, ...args]];
    case 'otelcol': {
      const { stdout } = await run(join(ROOT, 'scripts/setup/otelcol/build.sh'), [], { timeout: BUILD_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
      return [stdout.trim().split('\n').at(-1)!, args];
    }
    case 'prometheus':
      await run(join(ROOT, 'scripts/setup/prometheus/install.sh'), [], { timeout: 240_000 });
      return ['prometheus', args];
    case 'alertmanager':
      await run(join(ROOT, 'scripts/setup/alertmanager/install.sh'), [], { timeout: 240_000 });
      return ['prometheus-alertmanager', args];
    default:
      throw new Error(`stack: no local program for ${s.name}`);
  }
}

/** Writes the service's files (rendered with the local mapping, or copied from the repo) and makes its directories. */
async function placeFiles(s: Service, m: Mapping, stateDir: string, extra: Record<string, unknown>): Promise<void> {
  await mkdir(join(stateDir, s.name), { recursive: true });
  for (const f of s.files) {
    const to = m.file(s.name, f.at);
    const render = f.render;
    if (render === undefined) await copyFile(join(ROOT, f.repo), to);
    else
      await writeFile(
        to,
        configText(s, (mapping) => ({ ...render(mapping), ...extra }), m),
      );
  }
  for (const d of s.dirs) await mkdir(m.dir(s.name, d.at), { recursive: true });
}

async function startKafka(state: StackState, log: (line: string) => void): Promise<RunningService> {
  const dir = join(state.stateDir, 'kafka');
  const port = state.ports['kafka.client']!;
  const env = { ...process.env, TRAJWATCH_KAFKA_PORT: String(port), TRAJWATCH_KAFKA_DIR: dir };
  log(`kafka: starting a broker of its own with scripts/setup/kafka/broker.sh on 127.0.0.1:${port}`);
  await run(BROKER, ['start'], { env, timeout: 300_000 });
  const pid = Number((await readFile(join(dir, 'broker.pid'), 'utf8')).trim());
  return { name: 'kafka', pid, log: join(dir, 'broker.log'), addresses: { client: `127.0.0.1:${port}` } };
}

async function startService(s: Service, state: StackState, m: Mapping, extra: Record<string, unknown>): Promise<RunningService> {
  await placeFiles(s, m, state.stateDir, extra);
  const [program, args] = await commandOf(s, m);
  const logPath = join(state.stateDir, s.name, `${s.name}.log`);
  const out = await open(logPath, 'a');
  // Detached: the service outlives `up` (and its signals); `down` ends it by pid.
  const child = spawn(program, args, { detached: true, stdio: ['ignore', out.fd, out.fd], cwd: join(state.stateDir, s.name) });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  child.unref();
  await out.close();
  if (child.pid === undefined) throw new Error(`stack: could not start ${s.name} (${program})`);
  const running: RunningService = {
    name: s.name,
    pid: child.pid,
    log: logPath,
    addresses: Object.fromEntries(Object.keys(s.ports).map((p) => [p, m.addr(s.name, p)])),
  };
  state.services.push(running);
  await writeState(state);
  const ready = s.ready;
  const ok =
    ready === undefined || 'kafka' in ready
      ? async () => true
      : 'http' in ready
        ? () => httpOk(`http://${m.addr(s.name, ready.http.port)}${ready.http.path}`)
        : async () => (await readFile(logPath, 'utf8').catch(() => '')).includes(ready.log);
  await waitUntil(s.name, ok, async () => !gone, logPath);
  return running;
}

/** Starts every local service of the description, each after its dependencies, each waited for; refuses a second `up`. */
export async function up(o: UpOptions): Promise<StackState> {
  const log = o.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const existing = await readState(o.stateDir);
  if (existing !== undefined) {
    throw new Error(`stack: already up in ${o.stateDir} since ${existing.startedAt} (${stateFile(o.stateDir)}); run \`npm run stack -- down\` first`);
  }
  await mkdir(o.stateDir, { recursive: true });
  const ports: Record<string, number> = {};
  for (const s of LOCAL_SERVICES) {
    for (const p of Object.keys(s.ports)) {
      if (s.local === 'kafka-broker' && o.kafka !== undefined) continue;
      ports[`${s.name}.${p}`] = await freePort(s.local === 'kafka-broker');
    }
  }
  if (o.kafka !== undefined) ports['kafka.client'] = Number(o.kafka[0]!.split(':').at(-1));
  const state: StackState = {
    stateDir: o.stateDir,
    ports,
    suffix: o.suffix ?? '',
    kafka: { brokers: o.kafka ?? [`127.0.0.1:${ports['kafka.client']}`], own: o.kafka === undefined },
    services: [],
    startedAt: new Date().toISOString(),
  };
  await writeState(state);
  const m = localMapping(state);
  if (o.memberConfig !== undefined) log(`trajwatch members: the description's configuration plus ${Object.keys(o.memberConfig).join(', ')} (--member-config)`);
  try {
    for (const s of startOrder()) {
      if (s.local === 'kafka-broker') {
        if (state.kafka.own) state.services.push(await startKafka(state, log));
        else state.services.push({ name: 'kafka', addresses: { client: state.kafka.brokers.join(',') } });
        await writeState(state);
        const connection = KafkaConnectionSchema.parse({ brokers: state.kafka.brokers, clientId: 'trajwatch-stack' });
        await ensureTopics(
          kafkaClient(connection, { keyPrefix: 'stack.kafka.' }),
          TOPICS.map((t) => ({ topic: m.name(t), create: { numPartitions: PARTITIONS, replicationFactor: 1 }, fix: 'create it', where: 'the stack' })),
        );
        log(
          `kafka: ${state.kafka.brokers.join(',')}${state.kafka.own ? '' : ' (attached, not started here)'}; topics ${TOPICS.map((t) => m.name(t)).join(', ')}`,
        );
        continue;
      }
      const extra = s.local === 'trajwatch' ? (o.memberConfig ?? {}) : {};
      const r = await startService(s, state, m, extra);
      log(
        `${s.name}: pid ${r.pid}, ${Object.entries(r.addresses)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      );
    }
  } catch (err) {
    log(`stack: start failed, stopping what started: ${(err as Error).message}`);
    await down({ stateDir: o.stateDir, log, keep: true });
    throw err;
  }
  log(`stack: up; state in ${stateFile(o.stateDir)}; send OTLP to http://${m.addr('otel-collector', 'otlpHttp')} (npm run stack -- demo)`);
  return state;
}

async function stopPid(pid: number, stateDir: string): Promise<'stopped' | 'killed' | 'gone'> {
  if (!(await ownsPid(pid, stateDir))) return 'gone';
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + STOP_GRACE_MS;
  while (Date.now() < deadline) {
    if (!(await ownsPid(pid, stateDir))) return 'stopped';
    await new Promise((r) => setTimeout(r, 100));
  }
  process.kill(pid, 'SIGKILL');
  while (await ownsPid(pid, stateDir)) await new Promise((r) => setTimeout(r, 50));
  return 'killed';
}

export interface DownOptions {
  stateDir: string;
  log?: (line: string) => void;
  /** Keep the state directory (logs) after stopping; `up` failing uses it. */
  keep?: boolean;
}

/** Stops what `up` started, by pid, in reverse order; then removes the state directory. */
export async function down(o: DownOptions): Promise<void> {
  const log = o.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const state = await readState(o.stateDir);
  if (state === undefined) {
    log(`stack: nothing up in ${o.stateDir}`);
    return;
  }
  for (const s of [...state.services].reverse()) {
    if (s.pid === undefined) continue;
    if (s.name === 'kafka') {
      await run(BROKER, ['stop'], {
        env: { ...process.env, TRAJWATCH_KAFKA_PORT: String(state.ports['kafka.client']), TRAJWATCH_KAFKA_DIR: join(o.stateDir, 'kafka') },
        timeout: 120_000,
      });
      log('kafka: stopped');
      continue;
    }
    log(`${s.name}: ${await stopPid(s.pid, o.stateDir)} (pid ${s.pid})`);
  }
  if (o.keep === true) await rm(stateFile(o.stateDir), { force: true });
  else await rm(o.stateDir, { recursive: true, force: true });
  log(`stack: down${o.keep === true ? `; logs kept in ${o.stateDir}` : ''}`);
}

/** One line per service: alive or not, where. Resolves false when something `up` started is gone. */
export async function status(stateDir: string, log: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<boolean> {
  const state = await readState(stateDir);
  if (state === undefined) {
    log(`stack: not up (no ${stateFile(stateDir)})`);
    return false;
  }
  let allUp = true;
  for (const s of state.services) {
    const alive = s.pid === undefined ? undefined : await ownsPid(s.pid, stateDir);
    if (alive === false) allUp = false;
    const where = Object.entries(s.addresses)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    log(
      `${s.name.padEnd(15)} ${alive === undefined ? 'attached' : alive ? `running pid ${s.pid}` : `GONE (pid ${s.pid})`}  ${where}${s.log === undefined ? '' : `  log ${basename(s.log)}`}`,
    );
  }
  return allUp;
}
