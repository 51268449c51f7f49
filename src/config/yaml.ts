/**
 * A YAML configuration file (the Collector's users write YAML), read into the same raw object
 * a JSON file gives, so the one strict schema validates both. YAML 1.2 core schema: `yes`,
 * `no`, `on` stay strings and a bad type is an error, never a silent conversion; a duplicate
 * key, a custom tag or several documents are errors too. Keeps the document so an error can
 * name the line of the key it is about.
 */
import { isMap, isScalar, LineCounter, parseAllDocuments, type Document } from 'yaml';
import { ConfigError } from '../errors.ts';
import type { ConfigPath, RawConfig } from './raw-config.ts';

/** Parses `text` (the file at `source`); throws ConfigError naming the line of each YAML error. */
export function parseYamlConfig(text: string, source: string): RawConfig {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, strict: true, schema: 'core' });
  if (docs.length === 0) return rootNotAMapping(null, source); // an empty file, or only comments
  if (docs.length > 1) throw new ConfigError([`line ${lines.linePos(docs[1]!.range[0]).line}: one YAML document expected, found ${docs.length}`], source);
  const doc = docs[0]!;
  const problems = [...doc.errors, ...doc.warnings];
  if (problems.length > 0) {
    throw new ConfigError(
      problems.map((p) => `line ${lines.linePos(p.pos[0]).line}: not valid YAML: ${p.message.split('\n')[0]}`),
      source,
    );
  }
  const value: unknown = doc.toJS({ maxAliasCount: 100 });
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return rootNotAMapping(value, source);
  return { value: value as Record<string, unknown>, source, locate: (path) => lineOf(doc, lines, path) };
}

function rootNotAMapping(value: unknown, source: string): never {
  throw new ConfigError([`(root): expected a YAML mapping, got ${JSON.stringify(value ?? null)}`], source);
}

/** The line of the key at `path` (of its value when the key is a list index), or undefined when it is not in the file. */
function lineOf(doc: Document, lines: LineCounter, path: ConfigPath): number | undefined {
  if (path.length === 0) return undefined;
  const parent = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true);
  const last = path.at(-1)!;
  if (isMap(parent)) {
    const pair = parent.items.find((p) => isScalar(p.key) && String(p.key.value) === String(last));
    const node = pair?.key;
    if (isScalar(node) && node.range !== undefined && node.range !== null) return lines.linePos(node.range[0]).line;
    return undefined;
  }
  const node = doc.getIn(path, true) as { range?: [number, number, number] } | undefined;
  return node?.range === undefined ? undefined : lines.linePos(node.range[0]).line;
}
