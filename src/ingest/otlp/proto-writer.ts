/** The few protobuf writes the receivers' answers need (responses, statuses, retry info). */
export class ProtoWriter {
  #parts: Buffer[] = [];

  /** A varint field; zero is the default and is not written. */
  varintField(field: number, value: number): this {
    if (value !== 0) this.#parts.push(varint(field << 3), varint(value));
    return this;
  }

  /** A string field; the empty string is the default and is not written. */
  stringField(field: number, value: string): this {
    return value === '' ? this : this.bytesField(field, Buffer.from(value, 'utf8'));
  }

  /** A length-delimited field (bytes or an embedded message), written even when empty. */
  bytesField(field: number, value: Buffer): this {
    this.#parts.push(varint((field << 3) | 2), varint(value.length), value);
    return this;
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
