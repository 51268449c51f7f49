/**
 * The envelope the OTLP/protobuf traces and logs requests share: an export request holds
 * resource groups (`ResourceSpans`, `ResourceLogs`: a Resource and scope groups), a scope
 * group holds the signal's records. The signal's decoder supplies only its scope group.
 */
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
export function decodeExportRequest<Out>(body: Uint8Array, schema: ExportRequestSchema<Out>, out: Out): Out | DecodeError {
  const r = new ProtoReader(body);
  try {
    while (r.pos < r.length) {
      const field = r.readField();
      if (field === 1) {
        const end = r.expect(schema.request, field, wireLen).readLengthEnd();
        decodeResourceGroup(r, end, schema, out);
        r.expectEnd(schema.resourceGroup, end);
      } else {
        r.skipField(field);
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
    const field = r.readField();
    if (field === 1) {
      const resourceEnd = r.expect(schema.resourceGroup, field, wireLen).readLengthEnd();
      decodeResource(r, resourceEnd, resource);
      r.expectEnd('Resource', resourceEnd);
    } else if (field === 2) {
      const scopeEnd = r.expect(schema.resourceGroup, field, wireLen).readLengthEnd();
      schema.decodeScopeGroup(r, scopeEnd, resource, out);
      r.expectEnd(schema.scopeGroup, scopeEnd);
    } else {
      r.skipField(field);
    }
  }
}

/** Reads a Resource's attributes into `attributes`. */
function decodeResource(r: ProtoReader, end: number, attributes: Attributes): void {
  while (r.pos < end) {
    const field = r.readField();
    if (field === 1) {
      r.expect('Resource', field, wireLen);
      decodeKeyValueInto(r, attributes, 0);
    } else {
      r.skipField(field);
    }
  }
}
