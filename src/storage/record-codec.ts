/**
 * How one log frames its records on disk. `decode` looks at the bytes from `offset` on and says
 * what is there: a whole record (`bytes` long), not enough bytes yet (`need`: how many from
 * `offset` it wants before it can say more), or damage. Damage that reaches the end of the last
 * segment is a torn tail (a crash mid-write); anywhere else it is a StorageError.
 */
export interface RecordCodec<T> {
  /** Shown in errors: "write-ahead log", "findings log". */
  readonly name: string;
  /** What a record is called in an error ("line"): then errors give its number too. */
  readonly recordName?: string;
  decode(buffer: Buffer, offset: number): Decoded<T>;
}

export type Decoded<T> = { kind: 'record'; value: T; bytes: number } | { kind: 'more'; need: number } | { kind: 'damage'; reason: string; bytes: number };
