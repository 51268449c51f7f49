/**
 * The OTLP export steps both transports share, one routine per signal: admission, decode,
 * the request's own admission (traces), the durable or plain accept, the partial success.
 * What became of the export comes back as a value; the HTTP and gRPC receivers keep only
 * transport (authentication, framing, limits on the body) and answer the value by the one
 * map in `export-status.ts` (the Collector's OTLP receiver learns of backpressure the same
 * way: from what its consumer returns).
 */
import { DecodeError } from '../../errors.ts';
import type { DecodedLogsRequest } from '../log-record.ts';
import type { PipelineInput, RawRequest } from '../pipeline-input.ts';
import type { DecodedRequest } from '../span.ts';
import { decodeLogsBody, decodeTracesBodyLazily } from './decode-body.ts';
import type { PartialSuccess, ResponseFormat, Signal } from './response.ts';

/**
 * What became of one export. `accepted` carries what was decoded (`items`: spans or log
 * records) and what the sender is told was refused of it; `undecodable` the decoder's
 * message; `refused` the admission or durability reason (nothing was taken).
 */
export type ExportResult =
  | { kind: 'accepted'; items: number; partial: PartialSuccess | undefined }
  | { kind: 'undecodable'; message: string }
  | { kind: 'refused'; reason: string };

/** One signal's export steps, for a transport that has the request body in hand. */
export interface SignalExport {
  readonly signal: Signal;
  /**
   * Asked before the body is read (so a refused body is never buffered): a refusal while the
   * target names a reason, else undefined.
   */
  admit(target: PipelineInput): ExportResult | undefined;
  /** Decodes `body` and hands it to `target`, durably when the target logs requests first. */
  take(target: PipelineInput, body: Buffer, format: ResponseFormat): Promise<ExportResult>;
}

/**
 * The steps every signal shares, around its own decoder and accept: admission first (apart,
 * so a transport can ask it before reading the body), then decode; `accept` takes it from there.
 */
function signalExport<Decoded>(
  signal: Signal,
  decode: (format: ResponseFormat, body: Buffer) => Decoded | DecodeError,
  accept: (target: PipelineInput, decoded: Decoded, raw: RawRequest) => Promise<ExportResult>,
): SignalExport {
  return {
    signal,
    admit(target) {
      const busy = target.admission();
      return busy === undefined ? undefined : { kind: 'refused', reason: busy };
    },
    async take(target, body, format) {
      const decoded = decode(format, body);
      if (decoded instanceof DecodeError) return { kind: 'undecodable', message: decoded.message };
      return accept(target, decoded, { format, bytes: body });
    },
  };
}

/** `/v1/traces`, `TraceService/Export`: the request's own admission, then the (durable) accept. */
export const TRACES_EXPORT: SignalExport = signalExport('traces', decodeTracesBodyLazily, async (target, decoded, raw) => {
  const over = target.admitRequest?.(decoded);
  if (over !== undefined) return { kind: 'refused', reason: over };
  if (target.acceptDurably === undefined) target.accept(decoded);
  else {
    const refusal = await target.acceptDurably(decoded, raw);
    if (refusal !== undefined) return { kind: 'refused', reason: refusal.refused };
  }
  const rejected = decoded.rejected.length;
  return { kind: 'accepted', items: decoded.spans.length, partial: rejected === 0 ? undefined : { rejected, errorMessage: spanRejections(decoded) } };
});

/** `/v1/logs`, `LogsService/Export`: served only for a target with `acceptLogs`. */
export const LOGS_EXPORT: SignalExport = signalExport('logs', decodeLogsBody, async (target, decoded, raw) => {
  let unattachable: number;
  if (target.acceptLogsDurably === undefined) unattachable = target.acceptLogs!(decoded).unattachable;
  else {
    const accepted = await target.acceptLogsDurably(decoded, raw);
    if ('refused' in accepted) return { kind: 'refused', reason: accepted.refused };
    unattachable = accepted.unattachable;
  }
  return { kind: 'accepted', items: decoded.logs.length, partial: logsPartialSuccess(decoded, unattachable) };
});

/** The export routine of each signal. */
export const SIGNAL_EXPORTS: Readonly<Record<Signal, SignalExport>> = { traces: TRACES_EXPORT, logs: LOGS_EXPORT };

/**
 * The request counts a receiver reports for one export of `signal`: spans of a traces
 * request, log records (with `signal: 'logs'`) of a logs request; `reason` when it was refused.
 */
export function exportCounts(
  signal: Signal,
  result: ExportResult | undefined,
  reason?: string,
): { spans: number; rejectedSpans: number; reason?: string; signal?: 'logs'; logRecords?: number; rejectedLogRecords?: number } {
  const items = result?.kind === 'accepted' ? result.items : 0;
  const rejected = result?.kind === 'accepted' ? (result.partial?.rejected ?? 0) : 0;
  const why = reason === undefined ? {} : { reason };
  if (signal === 'logs') return { spans: 0, rejectedSpans: 0, signal, logRecords: items, rejectedLogRecords: rejected, ...why };
  return { spans: items, rejectedSpans: rejected, ...why };
}

/** The reason a refused or undecodable export is counted under; none for an accepted one. */
export function refusalReason(result: ExportResult): string | undefined {
  return result.kind === 'refused' ? result.reason : result.kind === 'undecodable' ? 'undecodable' : undefined;
}

function spanRejections(decoded: DecodedRequest): string {
  return countByReason(decoded.rejected, 'span(s)', new Map());
}

/**
 * The partial success of a logs request: records the decoder refused, and GenAI content events
 * that name no span (nothing to join them to). Application logs that are not content events
 * are accepted and only counted (`trajwatch_logs_total{outcome="not-content-event"}`).
 */
function logsPartialSuccess(decoded: DecodedLogsRequest, unattachable: number): PartialSuccess | undefined {
  const rejected = decoded.rejected.length + unattachable;
  if (rejected === 0) return undefined;
  const extra = new Map<string, number>();
  if (unattachable > 0) extra.set('GenAI content event without a trace and span id', unattachable);
  return { rejected, errorMessage: countByReason(decoded.rejected, 'log record(s)', extra) };
}

/** `"<n> <what>: <reason>; ..."`, reasons in order of first appearance, then `extra`'s. */
function countByReason(rejected: readonly { reason: string }[], what: string, extra: ReadonlyMap<string, number>): string {
  const byReason = new Map<string, number>();
  for (const r of rejected) byReason.set(r.reason, (byReason.get(r.reason) ?? 0) + 1);
  for (const [reason, n] of extra) byReason.set(reason, n);
  return [...byReason].map(([reason, n]) => `${n} ${what}: ${reason}`).join('; ');
}
