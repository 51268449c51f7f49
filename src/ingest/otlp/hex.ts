/** Lower-case hex for span and trace ids, the form every Span carries. */

const hexDigits = /^[0-9a-f]*$/;

/**
 * An OTLP/JSON id (hex, case-insensitive) in lower case, or `undefined` when it contains a
 * character that is not a hex digit or has an odd length.
 */
export function normalizeHexId(text: string): string | undefined {
  const lower = text.toLowerCase();
  return lower.length % 2 === 0 && hexDigits.test(lower) ? lower : undefined;
}
