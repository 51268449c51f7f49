import { Backoff } from '../storage/backoff.ts';

/** How many times a metadata request is asked again while the cluster settles. */
const SETTLE_ATTEMPTS = 8;

/**
 * Runs `request` again (the house backoff from 100 ms: at most about 25 s in all, half that on
 * average) while the broker answers a retriable error: a topic created a moment ago by this
 * process or by another member starting beside it is `UNKNOWN_TOPIC_OR_PARTITION` (or has no
 * leader yet) until every broker has its metadata. Any other error, or the last attempt's, is
 * thrown as it came.
 *
 * @example await whileSettling(() => consumer.subscribe({ topics: [topic] }));
 */
export async function whileSettling<T>(request: () => Promise<T>): Promise<T> {
  const backoff = new Backoff(100, 12_800);
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (err) {
      const retriable = (err as { retriable?: boolean }).retriable === true;
      if (!retriable || attempt >= SETTLE_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, backoff.next()));
    }
  }
}
