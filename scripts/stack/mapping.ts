/**
 * Where the stack description's names land. The description (description.ts) never writes a
 * host, a port, a path or a topic itself: it asks a {@link Mapping}. Two exist — one for
 * docker-compose (service names as hosts, the containers' fixed ports and mount points), one for
 * processes on this machine (loopback, a free port per listener, the state directory) — and
 * that is the whole difference between what compose starts and what `npm run stack -- up` runs.
 */
import { basename, join } from 'node:path';

/** The names and ports the description uses; the mapping resolves them. */
export interface Mapping {
  /** `compose` or `local`, only for the comments of rendered files. */
  readonly kind: 'compose' | 'local';
  /** How another service reaches `port` of `service`: `kafka:9092` / `127.0.0.1:40123`. */
  addr(service: string, port: string): string;
  /** Where `service` binds `port`: `0.0.0.0:4317` / `127.0.0.1:40123`. */
  listen(service: string, port: string): string;
  /** A file the service reads, by its container path: `/etc/prometheus/prometheus.yml` / `<state>/prometheus/prometheus.yml`. */
  file(service: string, containerPath: string): string;
  /** A directory the service writes, by its container path: `/data` / `<state>/trajwatch-1/data`. */
  dir(service: string, containerPath: string): string;
  /** A Kafka topic or consumer group by its shipped name (a suffix locally, so runs can share a broker). */
  name(shipped: string): string;
}

/** The container ports of each service, by listener name (`ports` in the description). */
export type PortTable = Readonly<Record<string, Readonly<Record<string, number>>>>;

/** docker-compose: service names as host names, container ports as declared, paths as mounted. */
export function composeMapping(ports: PortTable): Mapping {
  const port = (service: string, name: string): number => {
    const p = ports[service]?.[name];
    if (p === undefined) throw new Error(`stack description: service ${service} has no port ${name}`);
    return p;
  };
  return {
    kind: 'compose',
    addr: (service, name) => `${service}:${port(service, name)}`,
    listen: (service, name) => `0.0.0.0:${port(service, name)}`,
    file: (_service, containerPath) => containerPath,
    dir: (_service, containerPath) => containerPath,
    name: (shipped) => shipped,
  };
}

/** What the local mapping needs: the state directory and one free loopback port per listener. */
export interface LocalPlacement {
  stateDir: string;
  /** `service.port` → a loopback port that was free when `up` chose it. */
  ports: Readonly<Record<string, number>>;
  /** Appended to every topic and group name (`-<suffix>`); empty: the shipped names. */
  suffix: string;
}

/**
 * Processes here: every host is 127.0.0.1, every listener a free port chosen by `up`, every
 * container path a file or directory under `<state>/<service>/` (same base name), and topic and
 * group names suffixed when the broker is shared.
 */
export function localMapping(p: LocalPlacement): Mapping {
  const port = (service: string, name: string): number => {
    const n = p.ports[`${service}.${name}`];
    if (n === undefined) throw new Error(`stack: no local port for ${service}.${name}`);
    return n;
  };
  return {
    kind: 'local',
    addr: (service, name) => `127.0.0.1:${port(service, name)}`,
    listen: (service, name) => `127.0.0.1:${port(service, name)}`,
    file: (service, containerPath) => join(p.stateDir, service, basename(containerPath)),
    dir: (service, containerPath) => join(p.stateDir, service, basename(containerPath)),
    name: (shipped) => (p.suffix === '' ? shipped : `${shipped}-${p.suffix}`),
  };
}
