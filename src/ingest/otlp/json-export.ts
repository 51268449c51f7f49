/**
 * The envelope the OTLP/JSON traces and logs requests share, like `proto-export.ts` for
 * protobuf: the request's resource groups, each a Resource and scope groups; the signal's
 * decoder supplies only its scope group. Error paths name each level by its JSON name
 * (`resourceSpans[0].scopeSpans[1]`).
 */
import { DecodeError } from '../../errors.ts';
import type { Attributes } from '../span.ts';
import { decodeAttributesInto } from './json-any-value.ts';
import { type Cursor, field, type JsonObject, list, message } from './json-walk.ts';

/** One signal's export request: its groups' JSON names (lowerCamelCase, proto) and message names. */
export interface JsonExportSchema<Out> {
  /** `['resourceSpans', 'resource_spans']`, `['resourceLogs', 'resource_logs']`. */
  resourceGroups: readonly [string, string];
  /** `ResourceSpans`, `ResourceLogs`. */
  resourceGroup: string;
  /** `['scopeSpans', 'scope_spans']`, `['scopeLogs', 'scope_logs']`. */
  scopeGroups: readonly [string, string];
  /** `ScopeSpans`, `ScopeLogs`. */
  scopeGroup: string;
  /** Reads one scope group, whose path is `cursor.path` on entry, into `out`. */
  decodeScopeGroup(cursor: Cursor, group: JsonObject, resource: Attributes, out: Out): void;
}

/** A signal's request schema by OTLP's naming: `resource<Records>` groups holding `scope<Records>` groups. */
export function jsonExportSchema<Out>(records: 'Spans' | 'Logs', decodeScopeGroup: JsonExportSchema<Out>['decodeScopeGroup']): JsonExportSchema<Out> {
  const snake = records.toLowerCase();
  return {
    resourceGroups: [`resource${records}`, `resource_${snake}`],
    resourceGroup: `Resource${records}`,
    scopeGroups: [`scope${records}`, `scope_${snake}`],
    scopeGroup: `Scope${records}`,
    decodeScopeGroup,
  };
}

/** Parses `text` and decodes it with `decodeValue`; a syntax error is a returned {@link DecodeError}. */
export function decodeJsonText<Out>(text: string, decodeValue: (request: unknown) => Out | DecodeError): Out | DecodeError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return new DecodeError(`body is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  return decodeValue(parsed);
}

/** Decodes a parsed request as the export request of `schema` into `out`; bad input is a returned {@link DecodeError}. */
export function decodeJsonExportRequest<Out>(request: unknown, schema: JsonExportSchema<Out>, out: Out): Out | DecodeError {
  try {
    decodeRequest(request, schema, out);
  } catch (error) {
    if (error instanceof DecodeError) return error;
    throw error; // a defect in this decoder, not bad input
  }
  return out;
}

function decodeRequest<Out>(request: unknown, schema: JsonExportSchema<Out>, out: Out): void {
  const cursor: Cursor = { path: 'request', chars: 0 };
  const body = message(cursor, request, 'the request');
  const [groupsName] = schema.resourceGroups;
  const [scopesName] = schema.scopeGroups;
  const groups = list(cursor, body, ...schema.resourceGroups);
  for (let i = 0; i < groups.length; i++) {
    cursor.path = `${groupsName}[${i}]`;
    const group = message(cursor, groups[i], schema.resourceGroup);
    const resourceValue = field(group, 'resource', 'resource');
    const resource: Attributes = {};
    if (resourceValue !== undefined && resourceValue !== null) {
      cursor.path = `${groupsName}[${i}].resource`;
      decodeAttributesInto(cursor, message(cursor, resourceValue, 'Resource'), 'attributes', 'attributes', resource);
    }
    cursor.path = `${groupsName}[${i}]`;
    const scopes = list(cursor, group, ...schema.scopeGroups);
    for (let j = 0; j < scopes.length; j++) {
      cursor.path = `${groupsName}[${i}].${scopesName}[${j}]`;
      schema.decodeScopeGroup(cursor, message(cursor, scopes[j], schema.scopeGroup), resource, out);
    }
  }
}
