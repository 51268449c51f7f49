import { DecodeError } from '../../errors.ts';
import type { KafkaSourceConfig } from './config.ts';
import type { DecodedLogsRequest } from '../log-record.ts';
import { decodeLogsBody, decodeTracesBody } from '../otlp/decode-body.ts';
import type { DecodedRequest } from '../span.ts';

/** Why a record went to the dead-letter topic: a bounded set, so it can label a metric. */
export type DeadLetterReason = 'no-value' | 'undecodable-otlp-proto' | 'undecodable-otlp-json' | 'invalid-repartition-record';

/** A record that cannot be read as OTLP: the reason (metric label) and the decoder's message. */
export interface Undecodable {
  reason: DeadLetterReason;
  detail: string;
}

/**
 * Decodes one Kafka record's value of the spans topic with the same decoders as the HTTP receiver: an OTLP
 * `ExportTraceServiceRequest` in protobuf or JSON, as the Collector's Kafka exporter writes it.
 * Never throws: an unreadable record comes back as {@link Undecodable}.
 */
export function decodeRecord(value: Buffer | null, encoding: KafkaSourceConfig['encoding']): DecodedRequest | Undecodable {
  return decodeWith(decodeTracesBody, value, encoding);
}

/**
 * Decodes one record of the logs topic with the `/v1/logs` decoders: an OTLP
 * `ExportLogsServiceRequest` in protobuf or JSON. Never throws, like {@link decodeRecord}.
 */
export function decodeLogsRecord(value: Buffer | null, encoding: KafkaSourceConfig['logs']['encoding']): DecodedLogsRequest | Undecodable {
  return decodeWith(decodeLogsBody, value, encoding);
}

function decodeWith<Decoded>(
  decode: (format: 'protobuf' | 'json', body: Buffer) => Decoded | DecodeError,
  value: Buffer | null,
  encoding: 'otlp_proto' | 'otlp_json',
): Decoded | Undecodable {
  if (value === null) return { reason: 'no-value', detail: 'record has no value (a tombstone?)' };
  const decoded = decode(encoding === 'otlp_proto' ? 'protobuf' : 'json', value);
  if (decoded instanceof DecodeError) {
    return { reason: encoding === 'otlp_proto' ? 'undecodable-otlp-proto' : 'undecodable-otlp-json', detail: decoded.message };
  }
  return decoded;
}

/** Whether `decoded` is a refusal rather than a request. */
export function isUndecodable<Decoded extends object>(decoded: Decoded | Undecodable): decoded is Undecodable {
  return 'reason' in decoded;
}
