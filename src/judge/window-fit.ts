import type { Trajectory } from '../assemble/trajectory.ts';
import { extractWindows, type WindowRequest } from '../windows/extract.ts';
import type { TraceWindow, WindowRefusal } from '../windows/window.ts';
import type { JudgeConfig } from './config.ts';
import { buildRequestBody } from './prompt.ts';
import { requestRefusal } from './request-fit.ts';

/** A window to judge, its request body, and — when it stands in for a larger kind — why. */
export interface FittedWindow {
  window: TraceWindow;
  body: Record<string, unknown>;
  bytes: number;
  /** `judged as event: the turn window did not fit (context-tokens: …)`; absent when judged as asked. */
  fellBack?: string;
}

/**
 * The windows of `requests` that fit this judge's model, each with the request that will be
 * sent. A window fits when it is within the policy's caps and its request within
 * `maxRequestBytes` and the model's context (`requestRefusal`); one that does not is built again
 * as the policy's next smaller kind (`windowPolicy.config.fallback`), never truncated. Every
 * kind tried and not fitting comes back refused with its reason. Pure.
 */
export function fitWindows(
  t: Trajectory,
  requests: readonly WindowRequest[],
  cfg: Pick<JudgeConfig, 'client' | 'windowPolicy'>,
  policyDigest: string,
): { windows: FittedWindow[]; refusals: WindowRefusal[] } {
  const { model, maxOutputTokens, logprobs, topLogprobs, answerFormat } = cfg.client;
  const requestOf = new Map<TraceWindow, { body: Record<string, unknown>; bytes: number }>();
  const fits = (window: TraceWindow) => {
    const body = buildRequestBody(window, { model, maxOutputTokens, logprobs, topLogprobs, answerFormat });
    const bytes = Buffer.byteLength(JSON.stringify(body));
    requestOf.set(window, { body, bytes });
    return requestRefusal(bytes, cfg.windowPolicy.config.maxRequestBytes, cfg.client);
  };
  const { windows, refusals, fellBack } = extractWindows(t, requests, cfg.windowPolicy, policyDigest, { fallback: true, fits });
  return {
    windows: windows.map((window) => {
      const why = fellBack.get(window.id);
      return { window, ...requestOf.get(window)!, ...(why === undefined ? {} : { fellBack: why }) };
    }),
    refusals,
  };
}
