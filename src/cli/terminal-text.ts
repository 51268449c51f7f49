/**
 * Text from telemetry made safe for a terminal: control characters (an ANSI escape in a tool's
 * output could move the cursor or rewrite what a person reads) and line breaks are shown as
 * escapes, so one record stays one line and shows what was recorded. Pure.
 */

/** `text` with C0/C1 control characters and DEL written as `\n`, `\t`, `\xNN`. */
export function terminalSafe(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    return `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
}

/**
 * `terminalSafe(text)`, cut at `max` characters with the count of what was left out said at
 * the cut: a display shortens, but never silently.
 */
export function shortened(text: string, max: number): string {
  const safe = terminalSafe(text);
  return safe.length <= max ? safe : `${safe.slice(0, max)}… (+${safe.length - max} chars)`;
}
