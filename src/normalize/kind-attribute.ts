import type { Span } from '../ingest/span.ts';
import { idAttr } from './attributes.ts';
import type { StepKind } from './step.ts';

/**
 * The attribute a convention names a span's kind with, read through the convention's table:
 * `claims` is a span carrying it as a string (cheap enough for `ConventionMapper.matches`);
 * `kindOf` is the kind its value names once `spell` folds it (some emitters change case).
 */
export interface KindAttribute {
  readonly claims: (span: Span) => boolean;
  readonly kindOf: (span: Span) => StepKind;
}

export function kindAttribute(key: string, kinds: Readonly<Record<string, StepKind>>, spell: (value: string) => string = (value) => value): KindAttribute {
  return {
    claims: (span) => typeof span.attributes[key] === 'string',
    kindOf: (span) => kindIn(kinds, spell(idAttr(span.attributes, key) ?? '')),
  };
}

/** The kind `kinds` gives `value`; a value it does not list is `other`. */
export function kindIn(kinds: Readonly<Record<string, StepKind>>, value: string): StepKind {
  return Object.hasOwn(kinds, value) ? (kinds[value] as StepKind) : 'other';
}
