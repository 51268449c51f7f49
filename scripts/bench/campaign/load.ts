/**
 * Load for the fault campaign: synthetic agent traces (8 spans each, 64 per request, fresh
 * trace ids per request so nothing is a duplicate) over OTLP/HTTP protobuf, OTLP/HTTP JSON and
 * OTLP/gRPC with gzip. Every answer is tallied by what it says of the spans: acknowledged (200,
 * less any partialSuccess rejection), refused with a status (429/503/RESOURCE_EXHAUSTED/
 * UNAVAILABLE, with or without a retry hint), or lost to the network (reset, timeout).
 */
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { syntheticRequest, syntheticRequestProto } from '../../../bench/synthetic-spans.ts';

export const SPANS_PER_REQUEST = 64;
const TRACE_EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

export type Transport = 'http-proto' | 'http-json' | 'grpc-gzip';
export const TRANSPORTS: readonly Transport[] = ['http-proto', 'http-json', 'grpc-gzip'];

interface TemplateSpan {
  traceId: string;
  attributes: { key: string }[];
}
const templateRequest = syntheticRequest(SPANS_PER_REQUEST, 11) as { resourceSpans: { scopeSpans: { spans: TemplateSpan[] }[] }[] };
for (const span of templateRequest.resourceSpans[0]!.scopeSpans[0]!.spans) {
  // One trajectory per trace: the synthetic conversation id would join every request's traces.
  span.attributes = span.attributes.filter((a) => a.key !== 'gen_ai.conversation.id');
}
const templateTraceIds = [...new Set(templateRequest.resourceSpans[0]!.scopeSpans[0]!.spans.map((s) => s.traceId))];
export const TRACES_PER_REQUEST = templateTraceIds.length;
const protoTemplate = Buffer.from(syntheticRequestProto(templateRequest));
const jsonTemplate = JSON.stringify(templateRequest);
const protoOffsets = templateTraceIds.map((hex) => {
  const id = Buffer.from(hex, 'hex');
  const at: number[] = [];
  for (let i = protoTemplate.indexOf(id); i >= 0; i = protoTemplate.indexOf(id, i + 1)) at.push(i);
  return at;
});

/** The trace id of trace `t` of request `n` (`n` from 1; prefix tells campaign runs apart). */
export function traceIdOf(prefix: number, n: number, t: number): string {
  return `${prefix.toString(16).padStart(8, '0')}${n.toString(16).padStart(16, '0')}${(t + 1).toString(16).padStart(8, '0')}`;
}

export function protoBody(prefix: number, n: number): Buffer {
  const body = Buffer.from(protoTemplate);
  protoOffsets.forEach((offsets, t) => {
    const id = Buffer.from(traceIdOf(prefix, n, t), 'hex');
    for (const at of offsets) id.copy(body, at);
  });
  return body;
}

export function jsonBody(prefix: number, n: number): string {
  let text = jsonTemplate;
  templateTraceIds.forEach((hex, t) => {
    text = text.replaceAll(hex, traceIdOf(prefix, n, t));
  });
  return text;
}

export interface Tally {
  sentSpans: number;
  ackedSpans: number;
  refusedSpans: number;
  /** Refusals that carried no retry hint (Retry-After / RetryInfo). */
  refusedWithoutHint: number;
  /** Answers other than acknowledged or refused-retryable, by status. */
  statuses: Record<string, number>;
  /** No answer: connection reset, timeout, refused connect — by error code. */
  networkErrors: Record<string, number>;
  /** Request numbers whose spans were all acknowledged. */
  ackedRequests: number[];
}

export const newTally = (): Tally => ({
  sentSpans: 0,
  ackedSpans: 0,
  refusedSpans: 0,
  refusedWithoutHint: 0,
  statuses: {},
  networkErrors: {},
  ackedRequests: [],
});

/** `rejected_spans` of an ExportTraceServiceResponse (field 1 → field 1), 0 when absent. */
function rejectedSpans(bytes: Uint8Array): number {
  let i = 0;
  const varint = () => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[i++]!;
      v += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return v;
      shift += 7;
    }
  };
  while (i < bytes.length) {
    const tag = varint();
    if (tag >> 3 === 1 && (tag & 7) === 2) {
      const end = varint() + i;
      while (i < end) {
        const inner = varint();
        if (inner >> 3 === 1 && (inner & 7) === 0) return varint();
        if ((inner & 7) === 2) i += varint();
        else if ((inner & 7) === 0) varint();
        else return 0;
      }
      return 0;
    }
    if ((tag & 7) === 2) i += varint();
    else if ((tag & 7) === 0) varint();
    else return 0;
  }
  return 0;
}

function record(
  tally: Tally,
  n: number,
  outcome: { acked: boolean; rejected?: number; refused?: boolean; hint?: boolean; status?: string; network?: string },
): void {
  tally.sentSpans += SPANS_PER_REQUEST;
  if (outcome.acked) {
    const rejected = outcome.rejected ?? 0;
    tally.ackedSpans += SPANS_PER_REQUEST - rejected;
    tally.refusedSpans += rejected;
    if (rejected === 0) tally.ackedRequests.push(n);
    return;
  }
  if (outcome.network !== undefined) {
    tally.networkErrors[outcome.network] = (tally.networkErrors[outcome.network] ?? 0) + 1;
    return;
  }
  if (outcome.refused === true) {
    tally.refusedSpans += SPANS_PER_REQUEST;
    if (outcome.hint !== true) tally.refusedWithoutHint++;
  }
  tally.statuses[outcome.status!] = (tally.statuses[outcome.status!] ?? 0) + 1;
}

const grpcClients = new Map<number, grpc.Client>();
function grpcClient(port: number): grpc.Client {
  let client = grpcClients.get(port);
  if (client === undefined) {
    client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.default_compression_algorithm': 2 });
    grpcClients.set(port, client);
  }
  return client;
}
export function closeGrpcClients(): void {
  for (const c of grpcClients.values()) c.close();
  grpcClients.clear();
}

export interface Target {
  url: string;
  grpcPort: number;
}

/** Sends request `n` over `transport` and tallies its answer. Never throws. */
export async function sendRequest(target: Target, transport: Transport, prefix: number, n: number, tally: Tally, timeoutMs = 30_000): Promise<void> {
  if (transport === 'grpc-gzip') {
    await new Promise<void>((resolve) => {
      const deadline = new Date(Date.now() + timeoutMs);
      grpcClient(target.grpcPort).makeUnaryRequest(
        TRACE_EXPORT_PATH,
        (b: Buffer) => b,
        (b: Buffer) => b,
        protoBody(prefix, n),
        new grpc.Metadata(),
        { deadline },
        (error, response) => {
          if (error === null) record(tally, n, { acked: true, rejected: response === undefined ? 0 : rejectedSpans(response) });
          else if (error.code === grpc.status.RESOURCE_EXHAUSTED || error.code === grpc.status.UNAVAILABLE) {
            const networkish = /ECONNRESET|ECONNREFUSED|No connection established|Connection dropped/.test(error.details);
            if (networkish) record(tally, n, { acked: false, network: `grpc:${error.details.slice(0, 40)}` });
            else
              record(tally, n, { acked: false, refused: true, hint: error.metadata.get('grpc-status-details-bin').length > 0, status: `grpc-${error.code}` });
          } else if (error.code === grpc.status.DEADLINE_EXCEEDED) record(tally, n, { acked: false, network: 'grpc-deadline' });
          else record(tally, n, { acked: false, status: `grpc-${error.code}` });
          resolve();
        },
      );
    });
    return;
  }
  const json = transport === 'http-json';
  try {
    const res = await fetch(`${target.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': json ? 'application/json' : 'application/x-protobuf' },
      body: json ? jsonBody(prefix, n) : protoBody(prefix, n),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (res.status === 200) {
      const rejected = json
        ? Number(
            (JSON.parse(new TextDecoder().decode(bytes) || '{}') as { partialSuccess?: { rejectedSpans?: string | number } }).partialSuccess?.rejectedSpans ??
              0,
          )
        : rejectedSpans(bytes);
      record(tally, n, { acked: true, rejected });
    } else if (res.status === 429 || res.status === 503)
      record(tally, n, { acked: false, refused: true, hint: res.headers.get('retry-after') !== null, status: String(res.status) });
    else record(tally, n, { acked: false, status: String(res.status) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    record(tally, n, { acked: false, network: cause?.code ?? (error as Error).name });
  }
}

/** A gzip'd body for the hostile probe's gzip bomb: `inflatedBytes` of zeros. */
export function gzipOfZeros(inflatedBytes: number): Buffer {
  return gzipSync(Buffer.alloc(inflatedBytes));
}

/**
 * An open loop: `ratePerSecond` requests per second for `seconds`, transports in turn, at most
 * `maxInFlight` outstanding (beyond, the tick's requests are counted as not offered). Resolves
 * once every answer is in.
 */
export async function openLoop(
  target: Target | (() => Target),
  prefix: number,
  first: number,
  ratePerSecond: number,
  seconds: number,
  tally: Tally,
  maxInFlight = 1_024,
): Promise<{ next: number; skipped: number }> {
  const tickMs = 20;
  const perTick = ratePerSecond * (tickMs / 1000);
  const end = performance.now() + seconds * 1000;
  let n = first;
  let owed = 0;
  let inFlight = 0;
  let skipped = 0;
  const pending = new Set<Promise<void>>();
  while (performance.now() < end) {
    owed += perTick;
    while (owed >= 1) {
      owed -= 1;
      if (inFlight >= maxInFlight) {
        skipped++;
        continue;
      }
      const t = typeof target === 'function' ? target() : target;
      const transport = TRANSPORTS[n % TRANSPORTS.length]!;
      inFlight++;
      const p = sendRequest(t, transport, prefix, n++, tally).finally(() => {
        inFlight--;
        pending.delete(p);
      });
      pending.add(p);
    }
    await new Promise((r) => setTimeout(r, tickMs));
  }
  await Promise.all(pending);
  return { next: n, skipped };
}

/** A closed loop of `senders` for `seconds`: acknowledged spans per second (the capacity). */
export async function capacity(
  target: Target,
  prefix: number,
  first: number,
  seconds: number,
  senders = 8,
): Promise<{ spansPerSecond: number; next: number; tally: Tally }> {
  const tally = newTally();
  let n = first;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: senders }, async () => {
      while (performance.now() < end) await sendRequest(target, TRANSPORTS[n % TRANSPORTS.length]!, prefix, n++, tally);
    }),
  );
  return { spansPerSecond: Math.round(tally.ackedSpans / seconds), next: n, tally };
}
