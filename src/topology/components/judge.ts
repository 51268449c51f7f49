import type { DecisionPoints } from '../../judge/decision-points.ts';
import type { JudgeHealth } from '../../judge/judge-health.ts';
import { type Component, once } from '../component.ts';

/**
 * The judge (decision points) as a component. The pipeline's drain already tells it shutdown
 * began and closes it (queued windows deferred, calls cancelled); its own stop closes it again,
 * which is a no-op then, and the only close when the pipeline never started. A judge whose
 * calls fail refuses nothing (windows escalate without an answer): it is degraded, with the
 * failure of its last call (`http 500`, `timeout`...), until a call answers.
 */
export function judgeComponent(decisions: DecisionPoints, health?: JudgeHealth): Component {
  return {
    name: 'judge',
    start: async () => {},
    stop: once(() => decisions.close()),
    health: () => undefined,
    degraded: () => health?.failure(),
  };
}
