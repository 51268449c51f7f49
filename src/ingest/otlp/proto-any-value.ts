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
    const field = r.readField();
    if (field === 1) {
      r.expect('KeyValue', field, wireLen);
      key = r.readKey();
    } else if (field === 2) {
      r.expect('KeyValue', field, wireLen);
      value = decodeAnyValue(r, depth);
    } else {
      r.skipField(field);
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
    const field = r.readField();
    switch (field) {
      case 1:
        value = r.expect('AnyValue', field, wireLen).readString();
        break;
      case 2:
        value = r.expect('AnyValue', field, wireVarint).readVarint() !== 0;
        break;
      case 3:
        r.expect('AnyValue', field, wireVarint);
        r.readVarint64();
        value = int64FromHalves(r.low, r.high);
        break;
      case 4:
        r.expect('AnyValue', field, wireFixed64);
        value = r.readDouble();
        break;
      case 5:
        r.expect('AnyValue', field, wireLen);
        value = decodeArrayValue(r, depth + 1);
        break;
      case 6:
        r.expect('AnyValue', field, wireLen);
        value = decodeKeyValueList(r, depth + 1);
        break;
      case 7: {
        const bytesEnd = r.expect('AnyValue', field, wireLen).readLengthEnd();
        value = r.buf.toString('base64', r.pos, bytesEnd);
        r.pos = bytesEnd;
        break;
      }
      default:
        r.skipField(field);
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
    const field = r.readField();
    if (field === 1) {
      r.expect('ArrayValue', field, wireLen);
      values.push(decodeAnyValue(r, depth));
    } else {
      r.skipField(field);
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
    const field = r.readField();
    if (field === 1) {
      r.expect('KeyValueList', field, wireLen);
      decodeKeyValueInto(r, values, depth);
    } else {
      r.skipField(field);
    }
  }
  r.expectEnd('KeyValueList', end);
  return values;
}
