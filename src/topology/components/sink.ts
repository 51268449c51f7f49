import type { FindingSink } from '../../sinks/finding-sink.ts';
import { type Component, once } from '../component.ts';

/**
 * A findings sink as a component: opened by the builder, writing from the start, closed last
 * (after the pipeline drained into it). Its health is its backpressure reason; `backlogLimit`
 * is where that backpressure begins, when the sink has one bound (the Kafka outbox).
 */
export function sinkComponent(sink: FindingSink, backlogLimit?: Component['backlogLimit']): Component {
  return {
    ...(backlogLimit === undefined ? {} : { backlogLimit }),
    name: sink.name,
    start: async () => {},
    stop: once(() => sink.close()),
    health: () => sink.backpressure(),
    backlog: () => sink.backlog(),
  };
}
