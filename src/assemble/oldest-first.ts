/**
 * A Map read oldest first, cheaply however many of its oldest entries were deleted: one live
 * iterator is kept and advanced instead of a new one started at the front each time (which
 * walks every deleted slot up to the first live entry — linear per call, quadratic over a
 * bound's steady state of "delete the oldest, insert the newest").
 */
export class OldestFirst<K, V> {
  readonly #map = new Map<K, V>();
  #cursor: MapIterator<[K, V]> = this.#map.entries();
  /** Taken from the cursor and still in the map (cleared when deleted). */
  #head: [K, V] | undefined;

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  /** As `Map.set`: a key already present keeps its place. */
  set(key: K, value: V): void {
    this.#map.set(key, value);
    if (this.#head !== undefined && this.#head[0] === key) this.#head = [key, value];
  }

  delete(key: K): boolean {
    if (this.#head !== undefined && this.#head[0] === key) this.#head = undefined;
    return this.#map.delete(key);
  }

  /** Oldest first; `delete` may be called while iterating. */
  entries(): MapIterator<[K, V]> {
    return this.#map.entries();
  }

  /** The oldest entry, or undefined when empty. */
  oldest(): [K, V] | undefined {
    if (this.#head !== undefined) return this.#head;
    if (this.#map.size === 0) return undefined;
    let next = this.#cursor.next();
    // Exhausted (everything it passed was deleted, then more inserted): start again at the front.
    if (next.done === true) {
      this.#cursor = this.#map.entries();
      next = this.#cursor.next();
    }
    this.#head = next.value;
    return this.#head;
  }
}
