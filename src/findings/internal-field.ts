import type { z } from 'zod';

/** Who a view of a finding, alarm or manifest is for (docs/consumers.md "Audience"). */
export const AUDIENCES = ['internal', 'external'] as const;
export type Audience = (typeof AUDIENCES)[number];

/** The metadata key that marks a schema field as internal-only (also visible in the JSON Schema). */
export const AUDIENCE_META_KEY = 'audience';

/**
 * Marks a field of a record schema as internal: run internals and methodology (model ids,
 * receipts and cost, ledger keys, certificate ids, window-policy digests, run ids, data paths)
 * that an `external` view leaves out. Put it on the field as it sits in the object's shape
 * (after `.optional()`), so the audience walk (`audience.ts`) finds it there. The mark is read
 * from the schema itself, so a field is external until someone marks it, and the strip
 * refuses an undeclared key where the shape is open (see `TraceQuestionValuesSchema`).
 */
export function internalField<T extends z.ZodType>(schema: T, why: string): T {
  return schema.meta({ [AUDIENCE_META_KEY]: 'internal', description: `Internal only (left out of external views): ${why}` });
}
