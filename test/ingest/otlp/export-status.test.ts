import { describe, expect, it } from 'vitest';
import type { AdmissionRefusal } from '../../../src/ingest/pipeline-input.ts';
import { exportStatus, MEMORY_BOUND_REFUSALS } from '../../../src/ingest/otlp/export-status.ts';

describe('exportStatus: one answer per outcome for both transports', () => {
  it('names exactly the memory bounds (assembler, in-flight bodies) RESOURCE_EXHAUSTED (a new bound fails to compile here)', () => {
    const bounds: Record<AdmissionRefusal, true> = { 'max-open-trajectories': true, 'max-buffered-bytes': true, 'max-inflight-bytes': true };
    expect([...MEMORY_BOUND_REFUSALS].sort()).toEqual(Object.keys(bounds).sort());
    for (const reason of Object.keys(bounds)) expect(exportStatus({ kind: 'refused', reason })).toEqual({ grpcCode: 8, httpStatus: 503, retry: true });
  });

  it('maps each outcome to its gRPC code, HTTP status and whether the client retries', () => {
    expect(exportStatus({ kind: 'accepted' })).toEqual({ grpcCode: 0, httpStatus: 200, retry: false });
    expect(exportStatus({ kind: 'unauthenticated' })).toEqual({ grpcCode: 16, httpStatus: 401, retry: false });
    expect(exportStatus({ kind: 'undecodable' })).toEqual({ grpcCode: 3, httpStatus: 400, retry: false });
    expect(exportStatus({ kind: 'too-large' })).toEqual({ grpcCode: 8, httpStatus: 413, retry: false });
    expect(exportStatus({ kind: 'refused', reason: 'wal-full' })).toEqual({ grpcCode: 14, httpStatus: 503, retry: true });
    expect(exportStatus({ kind: 'not-served' })).toEqual({ grpcCode: 12, httpStatus: 404, retry: false });
    expect(exportStatus({ kind: 'internal' })).toEqual({ grpcCode: 13, httpStatus: 500, retry: false });
  });
});
