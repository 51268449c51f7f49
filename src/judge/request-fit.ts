import type { JudgeClientConfig } from './client.ts';

export interface RequestRefusal {
  reason: 'request-bytes' | 'context-tokens';
  detail: string;
}

/**
 * Whether one judge request may be sent, as a refusal (never a truncation) or null.
 * `request-bytes`: the body is over the policy's byte cap. `context-tokens`: the configured
 * model's context (`client.contextTokens`) cannot hold it: the prompt estimate (request bytes
 * / 4, the budget's estimate) plus the completion cap is over the context. The detail names
 * both figures, so an operator can pick a model with a larger context or a smaller window kind
 * (`windowPolicy.config.kinds`) for this model.
 */
export function requestRefusal(
  requestBytes: number,
  maxRequestBytes: number,
  client: Pick<JudgeClientConfig, 'contextTokens' | 'maxOutputTokens' | 'model'>,
): RequestRefusal | null {
  if (requestBytes > maxRequestBytes) return { reason: 'request-bytes', detail: `${requestBytes} bytes, cap ${maxRequestBytes}` };
  if (client.contextTokens === null) return null;
  const prompt = Math.ceil(requestBytes / 4);
  if (prompt + client.maxOutputTokens <= client.contextTokens) return null;
  return {
    reason: 'context-tokens',
    detail: `~${prompt} prompt tokens estimated (${requestBytes} bytes / 4) + ${client.maxOutputTokens} completion tokens, over the ${client.contextTokens}-token context of ${client.model}`,
  };
}
