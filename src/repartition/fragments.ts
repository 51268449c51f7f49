import { createHash } from 'node:crypto';
import { type FragmentHeader, REPARTITION_RECORD_VERSION } from './record.ts';

/**
 * Splits the encoded record of one trace into fragments of at most `maxFragmentBytes` each
 * (header line included), in order: a header line (`FragmentHeaderSchema`: the trace's ids, the
 * whole record's length and sha256, the index and count), a newline, then the slice. Stage 2
 * puts them back together (`reassembly.ts`); all go with the session id as key, so they land on
 * one partition in this order.
 *
 * @example splitRecord('conv-1', 'abc…', record, 1_000_000) // ⌈record.length / ~999,800⌉ buffers
 */
export function splitRecord(sessionId: string, traceId: string, record: Buffer, maxFragmentBytes: number): Buffer[] {
  const digest = createHash('sha256').update(record).digest('hex');
  const header = (index: number, count: number): Buffer => {
    const h: FragmentHeader = { v: REPARTITION_RECORD_VERSION, kind: 'fragment', sessionId, traceId, digest, bytes: record.length, index, count };
    return Buffer.from(`${JSON.stringify(h)}\n`);
  };
  // The header's length grows with the digits of index and count: size the slices for the largest.
  const headerBytes = header(record.length, record.length).length;
  const sliceBytes = maxFragmentBytes - headerBytes;
  if (sliceBytes < 1) throw new RangeError(`fragments of ${maxFragmentBytes} bytes leave no room past a ${headerBytes}-byte header`);
  if (record.length <= sliceBytes) throw new RangeError(`a record of ${record.length} bytes fits one message of ${maxFragmentBytes}: not split`);
  // Slices of even size, none empty.
  const size = Math.ceil(record.length / Math.ceil(record.length / sliceBytes));
  const count = Math.ceil(record.length / size);
  const out: Buffer[] = [];
  for (let index = 0; index < count; index++) {
    out.push(Buffer.concat([header(index, count), record.subarray(index * size, (index + 1) * size)]));
  }
  return out;
}
