import { LongText } from '../../ingest/long-text.ts';
import type { AttrValue } from '../../ingest/span.ts';
import type { Step } from '../../normalize/step.ts';

/** The first of `names` present (and not null) on the span, else on its resource. */
export function readAttribute(step: Step, names: readonly string[]): AttrValue | undefined {
  for (const source of [step.attributes, step.resource]) {
    for (const name of names) {
      const v = source[name];
      if (v !== undefined && v !== null) return v;
    }
  }
  return undefined;
}

/** A scalar attribute as text; structured values are not readings and give undefined. */
export function scalarText(value: AttrValue | undefined): string | undefined {
  const v = value instanceof LongText ? value.toString() : value;
  if (typeof v === 'string') return v.length > 0 ? v : undefined;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** A finite number from a number or a numeric string (many emitters send every value as text). */
export function numericValue(value: AttrValue | undefined): number | undefined {
  const v = value instanceof LongText ? value.toString() : value;
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
}
