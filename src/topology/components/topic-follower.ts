import { randomUUID } from 'node:crypto';
import type { Kafka, Consumer } from 'kafkajs';
import { type Component, once } from '../component.ts';

/**
 * Reads a topic (`tail --kafka`) with a throwaway consumer group that commits nothing, handing
 * each record's value to `print` until it returns false or the component stops. `done`
 * resolves when `print` asked to end (or on stop).
 */
export class TopicFollower implements Component {
  readonly name = 'tail.kafka';
  readonly #consumer: Consumer;
  readonly #topic: string;
  readonly #fromStart: boolean;
  readonly #print: (line: string) => boolean;
  #running = false;
  #ended = false;
  #end!: () => void;
  readonly done = new Promise<void>((resolve) => (this.#end = resolve));

  constructor(kafka: Kafka, topic: string, fromStart: boolean, print: (line: string) => boolean) {
    this.#consumer = kafka.consumer({ groupId: `trajwatch-tail-${randomUUID()}` });
    this.#topic = topic;
    this.#fromStart = fromStart;
    this.#print = print;
  }

  async start(): Promise<void> {
    this.#running = true;
    await this.#consumer.connect();
    await this.#consumer.subscribe({ topic: this.#topic, fromBeginning: this.#fromStart });
    await this.#consumer.run({
      autoCommit: false,
      eachMessage: async ({ message }) => {
        if (this.#ended || message.value === null) return;
        if (!this.#print(message.value.toString('utf8'))) {
          this.#ended = true;
          this.#end();
        }
      },
    });
  }

  readonly stop = once(async () => {
    this.#ended = true;
    this.#end();
    if (this.#running) await this.#consumer.disconnect();
  });

  health(): string | undefined {
    return undefined;
  }
}
