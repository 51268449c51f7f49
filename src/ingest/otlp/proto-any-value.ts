/**
 * OTLP/protobuf KeyValue and AnyValue decoding into {@link AttrValue}s, bounded by
 * {@link maxAnyValueDepth}.
 */
import { int64FromHalves, maxAnyValueDepth, setAttribute } from './any-value.ts';
import { type ProtoReader, wireFixed64, wireLen, wireVarint } from './proto-reader.ts';
import type { AttrValue } from '../span.ts';

/** Reads one length-prefixed KeyValue and stores it in `target`; a later duplicate key wins. */
export function decodeKeyValueInto(r: ProtoReader, target: { [key: string]: AttrValue }, depth: number): void {
  const end = r.readLengthEnd();
  let key = '';
  let value: AttrValue = null;
  while (r.pos < end) {
    const tag = r.readTag();
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (field === 1) {
      r.expectWireType('KeyValue', field, wireType, wireLen);
      key = r.readKey();
    } else if (field === 2) {
      r.expectWireType('KeyValue', field, wireType, wireLen);
      value = decodeAnyValue(r, depth);
    } else {
      r.skip(wireType, field);
    }
  }
  r.expectEnd('KeyValue', end);
  setAttribute(target, key, value);
}

/** Reads one length-prefixed AnyValue; `depth` counts the arrays and kvlists around it. */
export function decodeAnyValue(r: ProtoReader, depth: number): AttrValue {
  const end = r.readLengthEnd();
  let value: AttrValue = null; // no field set: the empty AnyValue
  while (r.pos < end) {
    const tag = r.readTag();
    const field = tag >>> 3;
    const wireType = tag & 7;
    switch (field) {
      case 1:
        r.expectWireType('AnyValue', field, wireType, wireLen);
        // Only an attribute's own value may stay a reference: strings inside arrays and kvlists
        // are read by the mappers into the step's structures (tool calls, schemas).
        value = depth === 0 ? r.readValueText() : r.readString();
        break;
      case 2:
        r.expectWireType('AnyValue', field, wireType, wireVarint);
        value = r.readVarint() !== 0;
        break;
      case 3:
        r.expectWireType('AnyValue', field, wireType, wireVarint);
        r.readVarint64();
        value = int64FromHalves(r.low, r.high);
        break;
      case 4:
        r.expectWireType('AnyValue', field, wireType, wireFixed64);
        value = r.readDouble();
        break;
      case 5:
        r.expectWireType('AnyValue', field, wireType, wireLen);
        value = decodeArrayValue(r, depth + 1);
        break;
      case 6:
        r.expectWireType('AnyValue', field, wireType, wireLen);
        value = decodeKeyValueList(r, depth + 1);
        break;
      case 7: {
        r.expectWireType('AnyValue', field, wireType, wireLen);
        const bytesEnd = r.readLengthEnd();
        value = r.buf.toString('base64', r.pos, bytesEnd);
        r.pos = bytesEnd;
        break;
      }
      default:
        r.skip(wireType, field);
    }
  }
  r.expectEnd('AnyValue', end);
  return value;
}

function checkDepth(r: ProtoReader, depth: number): void {
  if (depth > maxAnyValueDepth) {
    r.fail(`AnyValue nested deeper than maxAnyValueDepth (${maxAnyValueDepth}) at byte ${r.pos}`);
  }
}

function decodeArrayValue(r: ProtoReader, depth: number): AttrValue[] {
  checkDepth(r, depth);
  const end = r.readLengthEnd();
  const values: AttrValue[] = [];
  while (r.pos < end) {
    const tag = r.readTag();
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (field === 1) {
      r.expectWireType('ArrayValue', field, wireType, wireLen);
      values.push(decodeAnyValue(r, depth));
    } else {
      r.skip(wireType, field);
    }
  }
  r.expectEnd('ArrayValue', end);
  return values;
}

function decodeKeyValueList(r: ProtoReader, depth: number): { [key: string]: AttrValue } {
  checkDepth(r, depth);
  const end = r.readLengthEnd();
  const values: { [key: string]: AttrValue } = {};
  while (r.pos < end) {
    const tag = r.readTag();
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (field === 1) {
      r.expectWireType('KeyValueList', field, wireType, wireLen);
      decodeKeyValueInto(r, values, depth);
    } else {
      r.skip(wireType, field);
    }
  }
  r.expectEnd('KeyValueList', end);
  return values;
}
