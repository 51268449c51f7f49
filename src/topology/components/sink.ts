import type { FindingSink } from '../../sinks/finding-sink.ts';
import { type Component, once } from '../component.ts';

/**
 * A findings sink as a component: opened by the builder, writing from the start, closed last
 * (after the pipeline drained into it). Its health is its backpressure reason.
 */
export function sinkComponent(sink: FindingSink): Component {
  return {
    name: sink.name,
    start: async () => {},
    stop: once(() => sink.close()),
    health: () => sink.backpressure(),
    backlog: () => sink.backlog(),
  };
}
