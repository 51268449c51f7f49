import { crc32 } from 'node:zlib';
import type { Decoded, RecordCodec } from './record-codec.ts';

/*
 * The checksummed binary frame of the write-ahead log:
 *   u32 payload length | u8 type | u48 seq | u32 crc32(type, seq, payload) | payload
 * (big-endian).
 */

export const FRAME_HEADER_BYTES = 15;
/** The frame's seq field is 48 bits wide. */
export const MAX_FRAME_SEQ = 2 ** 48 - 1;

/** A decoded frame; `payload` is a view into the reader's buffer (copy it to keep it). */
export interface Frame {
  type: number;
  seq: number;
  payload: Buffer;
}

/** A frame as its header and payload, written together by `writev`: the payload is never copied. */
export function encodeFrame(type: number, seq: number, payload: Buffer): [Buffer, Buffer] {
  const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  header.writeUInt32BE(payload.length, 0);
  header.writeUInt8(type, 4);
  header.writeUIntBE(seq, 5, 6);
  header.writeUInt32BE(crc32(payload, crc32(header.subarray(4, 11))), 11);
  return [header, payload];
}

/** Frames whose type is at most `maxType`; a higher type or a checksum mismatch is damage. */
export function frameCodec(name: string, maxType: number): RecordCodec<Frame> {
  return {
    name,
    decode(buffer: Buffer, offset: number): Decoded<Frame> {
      if (buffer.length - offset < FRAME_HEADER_BYTES) return { kind: 'more', need: FRAME_HEADER_BYTES };
      const length = buffer.readUInt32BE(offset);
      const bytes = FRAME_HEADER_BYTES + length;
      if (offset + bytes > buffer.length) return { kind: 'more', need: bytes };
      const type = buffer.readUInt8(offset + 4);
      const seq = buffer.readUIntBE(offset + 5, 6);
      const payload = buffer.subarray(offset + FRAME_HEADER_BYTES, offset + bytes);
      const crcOk = buffer.readUInt32BE(offset + 11) === crc32(payload, crc32(buffer.subarray(offset + 4, offset + 11)));
      if (!crcOk) return { kind: 'damage', reason: 'checksum mismatch', bytes };
      if (type > maxType) return { kind: 'damage', reason: `unknown record type ${type}`, bytes };
      return { kind: 'record', value: { type, seq, payload }, bytes };
    },
  };
}
