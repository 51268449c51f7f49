/**
 * The JSON line of a finding or manifest, serialized once (where the record is built, or by
 * the first sink that writes it) and read by every sink (the local log, the Kafka record),
 * instead of each sink stringifying it again. Records are plain values nobody mutates after they are built (a
 * changed copy, such as an external view, is a new object and is serialized afresh), so the
 * text remembered for an object stays its `JSON.stringify`.
 */
const texts = new WeakMap<object, string>();

/** Remembers `text`, which must equal `JSON.stringify(record)`, as the record's line. */
export function rememberRecordJson<T extends object>(record: T, text: string): T {
  texts.set(record, text);
  return record;
}

/**
 * `JSON.stringify(record)`, serialized at most once: the text remembered at build time, or
 * the first sink's, is the next sink's (serve with the local log and Kafka writes each twice).
 */
export function recordJson(record: object): string {
  let text = texts.get(record);
  if (text === undefined) {
    text = JSON.stringify(record);
    texts.set(record, text);
  }
  return text;
}
