import type { TraceWindow } from '../windows/window.ts';
import type { FaultReporter } from './fault.ts';
import type { LabelWindowStore } from './label-windows.ts';

/**
 * The labeling hook (issue 20): a judged window as sent — by the trace questions, a layer or a
 * verifier — kept for `trajwatch label`. Not waited for; a failure is a fault, never the
 * window's fate.
 */
export function keepForLabeling(
  store: LabelWindowStore | undefined,
  queue: { track(p: Promise<void>): void },
  faults: FaultReporter,
  window: TraceWindow,
): void {
  if (store !== undefined) queue.track(store.put(window).catch((err: unknown) => faults.report('label-windows', err)));
}
