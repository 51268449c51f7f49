import type { DecisionPoints } from '../../judge/decision-points.ts';
import { type Component, once } from '../component.ts';

/**
 * The judge (decision points) as a component. The pipeline's drain already tells it shutdown
 * began and closes it (queued windows deferred, calls cancelled); its own stop closes it again,
 * which is a no-op then, and the only close when the pipeline never started.
 */
export function judgeComponent(decisions: DecisionPoints): Component {
  return {
    name: 'judge',
    start: async () => {},
    stop: once(() => decisions.close()),
    health: () => undefined,
  };
}
