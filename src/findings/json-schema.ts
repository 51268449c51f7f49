import { z } from 'zod';
import { FindingSchema } from './schema.ts';

/**
 * The finding schema as JSON Schema (draft 2020-12), for consumers in other languages;
 * `trajwatch schema finding` prints it.
 */
export function findingJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(FindingSchema, { target: 'draft-2020-12', io: 'output' }),
    $id: 'https://trajwatch.dev/schemas/finding-1.1.0.json',
    title: 'trajwatch finding 1.1.0',
  };
}
