/**
 * The receiver's answers in both OTLP content types: ExportTraceServiceResponse (with an
 * optional partialSuccess) and google.rpc.Status for errors.
 */

export const PROTOBUF = 'application/x-protobuf';
export const JSON_TYPE = 'application/json';

export type ResponseFormat = 'protobuf' | 'json';

export interface PartialSuccess {
  rejectedSpans: number;
  errorMessage: string;
}

export function exportResponse(format: ResponseFormat, partial?: PartialSuccess): Buffer {
  if (format === 'json') {
    const body =
      partial === undefined
        ? {}
        : { partialSuccess: { rejectedSpans: String(partial.rejectedSpans), errorMessage: partial.errorMessage } };
    return Buffer.from(JSON.stringify(body));
  }
  if (partial === undefined) return Buffer.alloc(0);
  const inner = new ProtoWriter();
  inner.varintField(1, partial.rejectedSpans);
  inner.stringField(2, partial.errorMessage);
  const outer = new ProtoWriter();
  outer.bytesField(1, inner.finish());
  return outer.finish();
}

/** google.rpc.Status codes used by the receiver. */
export const RPC_CODE = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

export function rpcStatus(format: ResponseFormat, code: number, message: string): Buffer {
  if (format === 'json') return Buffer.from(JSON.stringify({ code, message }));
  const w = new ProtoWriter();
  w.varintField(1, code);
  w.stringField(2, message);
  return w.finish();
}

/** The few protobuf writes the responses need. */
class ProtoWriter {
  #parts: Buffer[] = [];

  varintField(field: number, value: number): void {
    if (value === 0) return;
    this.#parts.push(varint(field << 3), varint(value));
  }

  stringField(field: number, value: string): void {
    if (value === '') return;
    this.bytesField(field, Buffer.from(value, 'utf8'));
  }

  bytesField(field: number, value: Buffer): void {
    this.#parts.push(varint((field << 3) | 2), varint(value.length), value);
  }

  finish(): Buffer {
    return Buffer.concat(this.#parts);
  }
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let v = value;
  while (v > 0x7f) {
    bytes.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
  return Buffer.from(bytes);
}
