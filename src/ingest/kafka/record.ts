import { DecodeError } from '../../errors.ts';
import type { KafkaSourceConfig } from './config.ts';
import { decodeOtlpJson } from '../otlp/json-decode.ts';
import { decodeOtlpProto } from '../otlp/proto-decode.ts';
import type { DecodedRequest } from '../span.ts';

/** Why a record went to the dead-letter topic: a bounded set, so it can label a metric. */
export type DeadLetterReason = 'no-value' | 'undecodable-otlp-proto' | 'undecodable-otlp-json' | 'invalid-repartition-record';

/** A record that cannot be read as OTLP: the reason (metric label) and the decoder's message. */
export interface Undecodable {
  reason: DeadLetterReason;
  detail: string;
}

/**
 * Decodes one Kafka record's value with the same decoders as the HTTP receiver: an OTLP
 * `ExportTraceServiceRequest` in protobuf or JSON, as the Collector's Kafka exporter writes it.
 * Never throws: an unreadable record comes back as {@link Undecodable}.
 */
export function decodeRecord(value: Buffer | null, encoding: KafkaSourceConfig['encoding']): DecodedRequest | Undecodable {
  if (value === null) return { reason: 'no-value', detail: 'record has no value (a tombstone?)' };
  const decoded = encoding === 'otlp_proto' ? decodeOtlpProto(value) : decodeOtlpJson(value.toString('utf8'));
  if (decoded instanceof DecodeError) {
    return { reason: encoding === 'otlp_proto' ? 'undecodable-otlp-proto' : 'undecodable-otlp-json', detail: decoded.message };
  }
  return decoded;
}

/** Whether `decoded` is a refusal rather than a request. */
export function isUndecodable(decoded: DecodedRequest | Undecodable): decoded is Undecodable {
  return 'reason' in decoded;
}
