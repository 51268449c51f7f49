import type { Step } from '../normalize/step.ts';
import { redactSecrets } from '../core/redact.ts';

/**
 * A short, deterministic quote of captured text: its first non-blank line, cut to `maxChars`,
 * with secrets redacted first (a finding's detail leaves the process like a judge request does;
 * redacting before the cut so half a key cannot slip past the rules).
 */
export function excerpt(text: string, maxChars: number): string {
  const line = firstLine(redactSecrets(text).text);
  return line.length > maxChars ? `${line.slice(0, maxChars)}…` : line;
}

/** The first non-blank line of a text, trimmed. */
export function firstLine(text: string): string {
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed !== '') return trimmed;
  }
  return '';
}

/** How a step is named in a detail: `tool "web_search"`, `agent "planner"`, `llm step "chat"`. */
export function describeStep(step: Step): string {
  if (step.kind === 'tool') return step.toolName === undefined ? `tool step "${step.name}"` : `tool "${step.toolName}"`;
  if (step.kind === 'agent') return `agent "${step.agentName ?? step.name}"`;
  return `${step.kind} step "${step.name}"`;
}

/** The evidence reference of a step. */
export function ref(step: Step): { traceId: string; spanId: string } {
  return { traceId: step.traceId, spanId: step.id };
}
