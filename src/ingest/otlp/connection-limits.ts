/**
 * Connection bounds of both receivers, set on purpose rather than left at Node's and grpc-js's
 * defaults (the Collector's confighttp/configgrpc server settings): a cap on connections open
 * per listener with a counted refusal, idle, header and request timeouts on HTTP, idle, age
 * and keepalive on gRPC.
 */
import type { Server as NetServer, Socket } from 'node:net';
import type { Server as HttpServer } from 'node:http';

export interface ConnectionLimits {
  maxConnections: number;
  idleTimeoutMs: number;
}

export interface HttpConnectionLimits extends ConnectionLimits {
  keepAliveGraceMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  timeoutCheckIntervalMs: number;
}

export interface GrpcConnectionLimits extends ConnectionLimits {
  maxConnectionAgeMs: number;
  maxConnectionAgeGraceMs: number;
  keepaliveTimeMs: number;
  keepaliveTimeoutMs: number;
}

/** What a listener reports: a connection opened or closed, one refused at the cap. */
export interface ConnectionObserver {
  opened(): void;
  closed(): void;
  refused(): void;
}

/**
 * The options `http.createServer` takes for `limits`. Keep-alive: announced as
 * `Keep-Alive: timeout=<idleTimeoutMs>` and closed `keepAliveGraceMs` later, so a client that
 * reuses a connection within what was announced is answered, not reset.
 */
export function httpServerOptions(limits: HttpConnectionLimits) {
  return {
    keepAliveTimeout: limits.idleTimeoutMs,
    keepAliveTimeoutBuffer: limits.keepAliveGraceMs,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: limits.timeoutCheckIntervalMs,
  };
}

/** grpc-js server options for `limits` (max_connection_idle/age, keepalive). */
export function grpcConnectionOptions(limits: GrpcConnectionLimits): Record<string, number> {
  return {
    'grpc.max_connection_idle_ms': limits.idleTimeoutMs,
    'grpc.max_connection_age_ms': limits.maxConnectionAgeMs,
    'grpc.max_connection_age_grace_ms': limits.maxConnectionAgeGraceMs,
    'grpc.keepalive_time_ms': limits.keepaliveTimeMs,
    'grpc.keepalive_timeout_ms': limits.keepaliveTimeoutMs,
  };
}

/**
 * Caps `server` at `maxConnections` open connections: Node closes a connection past the cap
 * as soon as it is accepted (`drop`), which is reported, so the refusal is counted and
 * logged. Every accepted connection is reported opened and, when it ends, closed.
 */
export function capConnections(server: NetServer, maxConnections: number, observer: ConnectionObserver): void {
  server.maxConnections = maxConnections;
  server.on('drop', () => observer.refused());
  server.on('connection', (socket: Socket) => {
    observer.opened();
    socket.once('close', () => observer.closed());
  });
}

/**
 * Closes an idle HTTP keep-alive connection only when it is still idle after the bytes waiting
 * on it were read. Node's keep-alive timer fires in the timers phase, before the poll phase
 * reads sockets: with the event loop lagging, a request the client already sent is still
 * unread when the timer fires, and closing then resets it (ECONNRESET on a reused socket).
 * Deferring the decision to `setImmediate` (after poll) lets such a request be read and
 * answered; a truly idle connection is closed one turn later.
 */
export function closeIdleAfterPendingReads(server: HttpServer, silentMs: number): void {
  // A connection that never sends a request is not covered by Node's header timeout (it
  // starts with the first byte): it is closed through the same path once silent this long.
  server.on('connection', (socket: Socket) => socket.setTimeout(silentMs));
  server.on('timeout', (socket: Socket) => {
    const read = socket.bytesRead;
    setImmediate(() => {
      if (socket.destroyed) return;
      const busy = (socket as Socket & { _httpMessage?: unknown })._httpMessage;
      if (socket.bytesRead === read && (busy === undefined || busy === null)) socket.destroy();
    });
  });
}
