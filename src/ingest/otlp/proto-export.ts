/**
 * The envelope the OTLP/protobuf traces and logs requests share: an export request holds
 * resource groups (`ResourceSpans`, `ResourceLogs`: a Resource and scope groups), a scope
 * group holds the signal's records. The signal's decoder supplies only its scope group.
 */
import type { TextSource } from '../long-text.ts';
import { DecodeError } from '../../errors.ts';
import type { Attributes } from '../span.ts';
import { decodeKeyValueInto } from './proto-any-value.ts';
import { ProtoReader, wireLen } from './proto-reader.ts';

/** One signal's export request, by its message names, and the decoder of its scope group. */
export interface ExportRequestSchema<Out> {
  /** `ExportTraceServiceRequest`, `ExportLogsServiceRequest`. */
  request: string;
  /** `ResourceSpans`, `ResourceLogs`. */
  resourceGroup: string;
  /** `ScopeSpans`, `ScopeLogs`. */
  scopeGroup: string;
  /** Reads one scope group (up to `end`) into `out`; `resource` is shared by its records. */
  decodeScopeGroup(r: ProtoReader, end: number, resource: Attributes, out: Out): void;
}

/** A signal's request schema by OTLP's naming: `Resource<records>` groups holding `Scope<records>` groups. */
export function exportRequestSchema<Out>(
  request: string,
  records: 'Spans' | 'Logs',
  decodeScopeGroup: ExportRequestSchema<Out>['decodeScopeGroup'],
): ExportRequestSchema<Out> {
  return { request, resourceGroup: `Resource${records}`, scopeGroup: `Scope${records}`, decodeScopeGroup };
}

/**
 * Decodes `body` as the export request of `schema` into `out`. A body that is not a
 * well-formed request yields the reader's {@link DecodeError}; bad input never throws.
 */
export function decodeExportRequest<Out>(body: Uint8Array, schema: ExportRequestSchema<Out>, out: Out, texts?: TextSource): Out | DecodeError {
  const r = new ProtoReader(body, texts);
  try {
    while (r.pos < r.length) {
      const tag = r.readTag();
      if (tag >>> 3 === 1) {
        r.expectWireType(schema.request, 1, tag & 7, wireLen);
        const end = r.readLengthEnd();
        decodeResourceGroup(r, end, schema, out);
        r.expectEnd(schema.resourceGroup, end);
      } else {
        r.skip(tag & 7, tag >>> 3);
      }
    }
  } catch (error) {
    if (error instanceof DecodeError) return error;
    throw error; // a defect in this decoder, not bad input
  }
  return out;
}

function decodeResourceGroup<Out>(r: ProtoReader, end: number, schema: ExportRequestSchema<Out>, out: Out): void {
  // Filled in place when the resource field arrives, which may come after the records.
  const resource: Attributes = {};
  while (r.pos < end) {
    const tag = r.readTag();
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (field === 1) {
      r.expectWireType(schema.resourceGroup, field, wireType, wireLen);
      const resourceEnd = r.readLengthEnd();
      decodeResource(r, resourceEnd, resource);
      r.expectEnd('Resource', resourceEnd);
    } else if (field === 2) {
      r.expectWireType(schema.resourceGroup, field, wireType, wireLen);
      const scopeEnd = r.readLengthEnd();
      schema.decodeScopeGroup(r, scopeEnd, resource, out);
      r.expectEnd(schema.scopeGroup, scopeEnd);
    } else {
      r.skip(wireType, field);
    }
  }
}

/** Reads a Resource's attributes into `attributes`. */
function decodeResource(r: ProtoReader, end: number, attributes: Attributes): void {
  while (r.pos < end) {
    const tag = r.readTag();
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (field === 1) {
      r.expectWireType('Resource', field, wireType, wireLen);
      decodeKeyValueInto(r, attributes, 0);
    } else {
      r.skip(wireType, field);
    }
  }
}
