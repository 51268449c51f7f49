// How an event of a window reads to a person: pure functions from the event's content (the
// canonical JSON the judge saw) to a small view model the page draws. No DOM here, so the
// same module is imported by the page and by its unit test. Nothing is parsed as HTML.

/**
 * @typedef {{ name: string, arguments: string }} ToolCall
 * @typedef {{ role: string, text: string, toolCalls: ToolCall[] }} Message
 * @typedef {{ label: string, text?: string, messages?: Message[], pre?: boolean }} Section
 * @typedef {{ kind: string, title: string, status: string, sections: Section[], raw: string }} EventView
 */

/** JSON text as a value, or undefined when it is not JSON (or not a string). */
function parsed(text) {
  if (typeof text !== 'string') return undefined;
  const t = text.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return undefined;
  try {
    return JSON.parse(t);
  } catch {
    return undefined;
  }
}

/** A value as readable text: JSON (a string holding JSON too) pretty-printed, other text as it is. */
export function pretty(value) {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') {
    const p = parsed(value);
    return p === undefined ? value : JSON.stringify(p, null, 2);
  }
  return JSON.stringify(value, null, 2);
}

const isObject = (x) => typeof x === 'object' && x !== null && !Array.isArray(x);

/** A tool call as OpenAI, GenAI, Vercel AI or Anthropic spell it, or undefined. */
function toolCallOf(x) {
  if (!isObject(x)) return undefined;
  if (isObject(x.function)) return { name: String(x.function.name ?? '(unnamed tool)'), arguments: pretty(x.function.arguments) };
  const type = typeof x.type === 'string' ? x.type : '';
  if (/^tool[-_]?(call|use)$/.test(type) || type === 'function_call') {
    return { name: String(x.name ?? x.toolName ?? '(unnamed tool)'), arguments: pretty(x.arguments ?? x.args ?? x.input) };
  }
  return undefined;
}

/** The text of a message's content: a string, or the text parts of a list of parts (a tool result part said as such). */
function textOf(content) {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return isObject(content) && typeof content.text === 'string' ? content.text : pretty(content);
  const out = [];
  for (const part of content) {
    if (typeof part === 'string') out.push(part);
    else if (toolCallOf(part) !== undefined) continue;
    else if (isObject(part) && /result|response/.test(String(part.type ?? ''))) {
      const body = part.result ?? part.output ?? part.response ?? part.content;
      out.push(`result of ${part.toolName ?? part.name ?? part.id ?? 'a tool call'}: ${typeof body === 'string' ? body : pretty(body)}`);
    } else if (isObject(part) && (typeof part.text === 'string' || typeof part.content === 'string')) out.push(part.text ?? part.content);
    else out.push(pretty(part));
  }
  return out.join('\n');
}

/** One chat message as role, text and tool calls; undefined when `m` is not a message. */
function messageOf(m) {
  if (!isObject(m) || typeof m.role !== 'string') return undefined;
  const content = m.content ?? m.parts;
  const calls = [...(Array.isArray(m.tool_calls) ? m.tool_calls : []), ...(Array.isArray(content) ? content : [])]
    .map(toolCallOf)
    .filter((c) => c !== undefined);
  return { role: m.role, text: textOf(content), toolCalls: calls };
}

/** A captured text as chat messages when it is a list of them (or `{messages: [...]}`), else undefined. */
export function messagesOf(text) {
  const v = parsed(text);
  const list = Array.isArray(v) ? v : isObject(v) && Array.isArray(v.messages) ? v.messages : isObject(v) && typeof v.role === 'string' ? [v] : undefined;
  if (list === undefined || list.length === 0) return undefined;
  const messages = list.map(messageOf);
  return messages.every((m) => m !== undefined) ? messages : undefined;
}

/** A section of captured text: as messages when it holds them, else as (pretty-printed) text. */
function textSection(label, value) {
  const messages = typeof value === 'string' ? messagesOf(value) : undefined;
  if (messages !== undefined) return { label, messages };
  return { label, text: pretty(value), pre: true };
}

function errorText(error) {
  if (!isObject(error)) return pretty(error);
  const what = [error.type, error.message].filter((x) => typeof x === 'string' && x !== '').join(': ');
  return what === '' ? `failed (${error.source ?? 'status'})` : what;
}

/**
 * The view of one event: an LLM step as its messages in and out (role, text, tool calls with
 * their arguments pretty-printed), a tool step as its name, arguments, result or error, any
 * other step as its input and output; `raw` is the content exactly as the judge saw it.
 * Content that is not the JSON the window store writes is shown as raw text.
 * @param {string} content
 * @returns {EventView}
 */
export function eventView(content) {
  const c = parsed(content);
  const raw = isObject(c) ? JSON.stringify(c, null, 2) : String(content);
  if (!isObject(c)) return { kind: 'text', title: 'event', status: '', sections: [{ label: 'content', text: String(content), pre: true }], raw };
  const kind = typeof c.step === 'string' ? c.step : 'step';
  const status = c.status === 'error' || c.error !== undefined ? 'error' : typeof c.status === 'string' ? c.status : '';
  const sections = [];
  let title;
  if (kind === 'tool') {
    title = `tool ${c.tool ?? c.name ?? '(name not captured)'}`;
    if (c.args !== undefined) sections.push({ label: 'arguments', text: pretty(c.args), pre: true });
    if (c.result !== undefined) sections.push({ label: 'result', text: pretty(c.result), pre: true });
  } else {
    title = [kind === 'llm' ? 'LLM' : kind, c.agent !== undefined ? `agent ${c.agent}` : c.name, c.model !== undefined ? `model ${c.model}` : undefined]
      .filter((x) => x !== undefined)
      .join(' · ');
    if (c.input !== undefined) sections.push(textSection(kind === 'llm' ? 'messages in' : 'input', c.input));
    if (c.args !== undefined) sections.push({ label: 'arguments', text: pretty(c.args), pre: true });
    if (c.result !== undefined) sections.push(textSection(kind === 'llm' ? 'output' : 'result', c.result));
  }
  if (c.error !== undefined) sections.push({ label: 'error', text: errorText(c.error), pre: true });
  if (sections.length === 0) sections.push({ label: 'content', text: 'no content captured', pre: false });
  return { kind, title, status, sections, raw };
}
