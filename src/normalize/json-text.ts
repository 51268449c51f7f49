/** Parsed JSON text; a wrapper so that a parsed `null` differs from "not JSON". */
export interface ParsedJson {
  value: unknown;
}

/**
 * Parses `text` as JSON without throwing: `undefined` when it is not JSON.
 * Text whose first significant character cannot start JSON is rejected before `JSON.parse`,
 * because a thrown SyntaxError is costly and most non-JSON captures are prose.
 */
export function parseJsonText(text: string): ParsedJson | undefined {
  if (!mayBeJson(text)) return undefined;
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
}

function mayBeJson(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // JSON insignificant whitespace: space, tab, line feed, carriage return.
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    return (
      c === 0x7b /* { */ ||
      c === 0x5b /* [ */ ||
      c === 0x22 /* " */ ||
      c === 0x2d /* - */ ||
      (c >= 0x30 && c <= 0x39) /* digit */ ||
      c === 0x74 /* t */ ||
      c === 0x66 /* f */ ||
      c === 0x6e /* n */
    );
  }
  return false;
}
