/** Reads a stream to its end (tsconfig's lib predates `Array.fromAsync`). */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
