import { formatHostPort, type HostPort } from '../config/host-port.ts';

/** One address a command listens on, and how the user moves it. */
export interface Listener {
  address: HostPort;
  /** What listens there, e.g. `OTLP/HTTP`. */
  what: string;
  /** The flag (and variable) that moves it, e.g. `--otlp-http HOST:PORT (env TRAJWATCH_OTLP_HTTP)`. */
  move: string;
}

/** Who usually holds a port trajwatch listens on by default. */
const LIKELY_HOLDERS: Readonly<Record<number, string>> = {
  4317: 'an OpenTelemetry Collector or another trajwatch serve (both take 4317 for OTLP/gRPC)',
  4318: 'an OpenTelemetry Collector or another trajwatch serve (both take 4318 for OTLP/HTTP)',
  4320: 'another trajwatch label',
};

/**
 * The one line for a listen that failed because the address is taken: which address, who
 * likely holds it, and the flag that moves it; undefined for any other failure (it keeps its
 * stack). Node's net error names the address in `address`/`port`; grpc-js only in its message.
 */
export function addressInUseLine(err: unknown, listeners: readonly Listener[]): string | undefined {
  const e = err as (NodeJS.ErrnoException & { port?: number }) | undefined;
  const message = String(e?.message ?? err);
  if (e?.code !== 'EADDRINUSE' && !message.includes('EADDRINUSE')) return undefined;
  const listener =
    listeners.find((l) => e?.port !== undefined && l.address.port === e.port) ??
    listeners.find((l) => l.address.port !== 0 && message.includes(`:${l.address.port}`)) ??
    (listeners.length === 1 ? listeners[0] : undefined);
  if (listener === undefined) return `an address is already in use: ${message.split('\n')[0]}`;
  const { port } = listener.address;
  const holder = LIKELY_HOLDERS[port] ?? 'another program (another trajwatch?)';
  return (
    `${formatHostPort(listener.address)} (${listener.what}) is already in use, likely by ${holder}; ` +
    `find it with \`lsof -iTCP:${port} -sTCP:LISTEN\` or \`ss -ltnp 'sport = :${port}'\`, or listen elsewhere with ${listener.move}`
  );
}
