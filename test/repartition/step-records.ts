/**
 * Repartition records made directly from steps, as stage 1 encodes them: for tests that write
 * the internal topic (or stage 2's reader) without running stage 1.
 */
import { encodeTraceRecord } from '../../src/repartition/record.ts';
import { makeStep } from '../helpers/steps.ts';

const CAPTURE = { revision: 1, incompleteReasons: [], conflicts: [], refusedSpans: 0, closedBy: 'quiet-after-root' };

/** The record of trace `traceId` in `sessionId`: a root and `n - 1` tool steps below it, results of `bytes` each. */
export function traceRecord(sessionId: string, traceId: string, n: number, bytes: number): Buffer {
  const t0 = 1_700_000_000_000_000_000n;
  const id = (i: number) => `${traceId.slice(0, 8)}${String(i).padStart(8, '0')}`;
  const steps = Array.from({ length: n }, (_, i) =>
    makeStep({
      id: id(i),
      traceId,
      ...(i === 0 ? {} : { parentId: id(0) }),
      kind: 'tool',
      name: 'execute_tool read_file',
      convention: 'genai',
      toolName: 'read_file',
      sessionId,
      result: `line ${i}: ${'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytes / 27))}`.slice(0, bytes),
      startTimeUnixNano: t0 + BigInt(i) * 1_000_000n,
      endTimeUnixNano: t0 + BigInt(i) * 1_000_000n + 500_000n,
      statusCode: 1,
      encodedBytes: bytes,
    }),
  );
  return encodeTraceRecord(sessionId, traceId, steps, CAPTURE);
}
