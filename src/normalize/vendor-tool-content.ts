import type { Attributes } from '../ingest/span.ts';
import { jsonDigest } from './args-digest.ts';
import { parseJsonText } from './json-text.ts';
import type { Step } from './step.ts';
import { toToolArgs } from './tool-args.ts';

/**
 * A vendor's own pair of attributes for a GenAI tool span's arguments and result, read after
 * `gen_ai.tool.call.arguments` / `gen_ai.tool.call.result` (which win when both are there).
 */
interface VendorToolContent {
  /** JSON text of the arguments object. */
  args: string;
  /** JSON text of the result. */
  result: string;
  /** What the vendor writes to both attributes when content capture is off. */
  redacted: string;
  /** Results (parsed) that say "no result" rather than being one. */
  placeholderResults: readonly unknown[];
}

/**
 * Google ADK's legacy telemetry schema (`ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1`) writes tool
 * content only here, from `google/adk/telemetry/tracing.py` `trace_tool_call`: the arguments
 * as JSON of the args dict, the response as JSON with a non-dict result wrapped as
 * `{"result": …}`; `{}` in both when `ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS` is off; the result
 * `{"result": "<not specified>"}` when the call had no response event; and args `N/A` on the
 * `(merged tools)` span of parallel calls.
 */
export const VENDOR_TOOL_CONTENT: readonly VendorToolContent[] = [
  {
    args: 'gcp.vertex.agent.tool_call_args',
    result: 'gcp.vertex.agent.tool_response',
    redacted: '{}',
    placeholderResults: [{ result: '<not specified>' }],
  },
];

/**
 * Fills a tool step's args and result from the vendor pairs, for what it does not hold yet.
 * Rules, so that a redaction or placeholder never becomes content two calls could share (a
 * false repetition):
 * - args are read only when they are a JSON object: the vendor serializes the args dict, so
 *   anything else (ADK's `N/A`) is a placeholder;
 * - args equal to the redaction marker are content only when the result beside them is not
 *   the marker too: both `{}` is what capture-off writes, and cannot be told from a call with
 *   no arguments and an empty result, so neither is read;
 * - a placeholder result, or a redacted one, is absent.
 */
export function readVendorToolContent(attributes: Attributes, step: Step): void {
  for (const pair of VENDOR_TOOL_CONTENT) {
    const args = attributes[pair.args];
    const result = attributes[pair.result];
    const argsText = typeof args === 'string' ? args : undefined;
    const resultText = typeof result === 'string' ? result : undefined;
    const redacted = resultText === undefined || resultText.trim() === pair.redacted;
    if (step.args === undefined && argsText !== undefined && isJsonObject(argsText) && !(argsText.trim() === pair.redacted && redacted)) {
      step.args = toToolArgs(argsText, 'json');
    }
    if (step.result === undefined && resultText !== undefined && !redacted && !isPlaceholder(resultText, pair.placeholderResults)) {
      step.result = resultText;
    }
  }
}

function isJsonObject(text: string): boolean {
  const json = parseJsonText(text);
  return json !== undefined && typeof json.value === 'object' && json.value !== null && !Array.isArray(json.value);
}

function isPlaceholder(text: string, placeholders: readonly unknown[]): boolean {
  const json = parseJsonText(text);
  if (json === undefined) return false;
  const canonical = jsonDigest(json.value);
  return placeholders.some((p) => jsonDigest(p) === canonical);
}
