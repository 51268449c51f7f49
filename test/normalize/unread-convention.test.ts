/**
 * Spans that look like tool or model work in a convention trajwatch does not read must come
 * out as capture gaps (`unread-convention`), never as silence: no absence claim over calls
 * that were never read.
 */
import { describe, expect, it } from 'vitest';
import { captureGaps } from '../../src/assemble/capture-gaps.ts';
import { checksConfigSchema } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import { findingsFromChecks } from '../../src/findings/from-checks.ts';
import { buildManifest } from '../../src/findings/manifest.ts';
import { parseProvenanceConfig } from '../../src/findings/provenance/config.ts';
import { deriveProvenance } from '../../src/findings/provenance/derive.ts';
import type { Attributes, Span } from '../../src/ingest/span.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import type { Step } from '../../src/normalize/step.ts';
import { detectUnreadConvention } from '../../src/normalize/unread-convention.ts';
import { makeTrajectory } from '../helpers/steps.ts';
import { makeSpan } from './make-span.ts';

const CHECKS = checksConfigSchema.parse({});
const T0 = 1_700_000_000_000_000_000n;

function span(i: number, name: string, attributes: Attributes, over: Partial<Span> = {}): Span {
  return makeSpan({
    spanId: `00000000000000${String(i).padStart(2, '0')}`,
    parentSpanId: i === 1 ? '' : '0000000000000001',
    name,
    attributes,
    startTimeUnixNano: T0 + BigInt(i) * 1_000_000n,
    endTimeUnixNano: T0 + BigInt(i) * 1_000_000n + 500_000n,
    ...over,
  });
}

function manifestOf(steps: Step[]) {
  const t = makeTrajectory(steps);
  const checks = runChecks(t, CHECKS);
  const provenance = deriveProvenance(t, parseProvenanceConfig({}));
  const findings = findingsFromChecks(t, checks, provenance);
  const m = buildManifest({ trajectory: t, checks, findings, provenance, judge: 'disabled', windows: [] });
  return { t, findings, byCheck: Object.fromEntries(m.checks.map((c) => [c.check, c])) };
}

const ROOT = span(1, 'agent run', {});
/** An instrumentation with its own attribute names: the tool is in the span name, its call in `name`/`input`. */
const FUNCTION_SPAN = span(2, 'Function: lookup_order', { name: 'lookup_order', input: '{"order_id": "42"}', output: 'shipped' });
/** A vendor classification attribute saying TOOL, with the vendor's own input key. */
const VENDOR_TOOL = span(3, 'lookup_order', { 'mlflow.spanType': 'TOOL', 'mlflow.spanInputs': '{"order_id": "42"}', 'mlflow.spanOutputs': '"shipped"' });
const VENDOR_TOOL_AGAIN = span(4, 'lookup_order', { 'acme.spanType': 'TOOL', 'acme.input': '{"order_id": "42"}' });

describe('unread conventions', () => {
  it('a `Function: lookup_order` span and a `spanType: TOOL` span make the manifest unavailable, not none-observed, for every tool absence claim', () => {
    const steps = [ROOT, FUNCTION_SPAN, VENDOR_TOOL_AGAIN].map(normalizeSpan);
    const { t, byCheck } = manifestOf(steps);
    expect(t.complete).toBe(true);
    expect(captureGaps(t.steps).map((g) => g.reason)).toContain('unread-convention');
    for (const check of ['tool-repetition', 'unguarded-send', 'out-of-order-gate']) {
      expect(byCheck[check], check).toMatchObject({ status: 'unavailable', reason: 'unread-convention' });
    }
  });

  it('an unread span that could be the gate keeps a read send from being called unguarded', () => {
    const approve = span(2, 'Function: approve_send', { name: 'approve_send', input: '{"to": "a@b.c"}' });
    const send = span(3, 'execute_tool send_email', {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'send_email',
      'gen_ai.tool.call.arguments': '{"to": "a@b.c"}',
      'gen_ai.tool.call.result': 'sent',
    });
    const { findings, byCheck } = manifestOf([ROOT, approve, send].map(normalizeSpan));
    expect(findings.filter((f) => f.area === 'unguarded-send')).toEqual([]);
    expect(byCheck['unguarded-send']).toMatchObject({ status: 'unavailable', reason: 'unread-convention' });
  });

  it('names the signal it saw in `unreadConvention`, on a step that stays `other`', () => {
    const steps = [FUNCTION_SPAN, VENDOR_TOOL_AGAIN].map(normalizeSpan);
    expect(steps.map((s) => [s.kind, s.convention, s.unreadConvention])).toEqual([
      ['other', 'generic', 'name-pattern=Function: *'],
      ['other', 'generic', 'acme.spanType=TOOL'],
    ]);
    expect(VENDOR_TOOL.attributes['mlflow.spanType']).toBe('TOOL');
  });

  it.each([
    ['langsmith.span.kind', 'tool', 'langsmith.span.kind=tool'],
    ['lmnr.span.type', 'LLM', 'lmnr.span.type=LLM'],
    ['langfuse.observation.type', 'generation', 'langfuse.observation.type=generation'],
    ['mlflow.spanType', '"CHAT_MODEL"', 'mlflow.spanType=CHAT_MODEL'],
    ['spanType', 'FUNCTION_CALL', 'spanType=FUNCTION_CALL'],
    ['vendor.run_type', 'tool', 'vendor.run_type=tool'],
  ])('reads a classification attribute %s=%s as %s', (key, value, hint) => {
    expect(detectUnreadConvention(makeSpan({ attributes: { [key]: value } }))).toBe(hint);
  });

  it.each([
    ['Function: lookup_order', 'name-pattern=Function: *'],
    ['tool: search', 'name-pattern=tool: *'],
    ['Tool call: send_email', 'name-pattern=Tool call: *'],
    ['execute_tool get_weather', 'name-pattern=execute_tool *'],
  ])('reads the span name %s as %s', (name, hint) => {
    expect(detectUnreadConvention(makeSpan({ name }))).toBe(hint);
  });

  it.each([
    ['input', '{"name": "lookup_order", "arguments": "{\\"order_id\\": \\"42\\"}"}'],
    ['acme.tool.arguments', '{"function": {"name": "lookup_order"}}'],
    ['acme.spanInputs', '{"type": "tool_use", "name": "lookup_order", "input": {}}'],
    ['call.args', '{"args": [], "kwargs": {"order_id": "42"}}'],
  ])('reads a function-call-shaped %s', (key, value) => {
    expect(detectUnreadConvention(makeSpan({ attributes: { [key]: value } }))).toBe('input=function-call-shape');
  });

  it.each([
    [
      'an HTTP client span',
      'POST',
      { 'http.request.method': 'POST', 'url.full': 'https://api.example.com/v1/orders', 'http.target': '{"name": "x", "arguments": 1}' },
    ],
    ['a framework chain', 'RunnableSequence', { 'acme.span.kind': 'CHAIN', input: '{"messages": []}' }],
    ['an agent of an unread convention', 'weather_turn', { 'mlflow.spanType': '"AGENT"', 'mlflow.spanInputs': '{"text": "hi"}' }],
    ['a plain JSON input', 'handler', { input: '{"order_id": "42"}', name: 'lookup_order' }],
    ['a name that only mentions a tool', 'Tool execution finished', {}],
    ['an OTel span kind value', 'GET /', { 'span.kind': 'CLIENT' }],
    ['a too-long input', 'handler', { input: JSON.stringify({ name: 'x', arguments: 'y'.repeat(70_000) }) }],
  ])('does not mark %s', (_what, name, attributes) => {
    expect(detectUnreadConvention(makeSpan({ name, attributes }))).toBeUndefined();
  });
});
