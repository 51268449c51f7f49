import type { MetricValue, Registry } from 'prom-client';

/** What an OpenMetrics scrape is answered with. */
export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/**
 * True when an HTTP `Accept` header ranks OpenMetrics at least as high as the Prometheus text
 * format. Prometheus asks for OpenMetrics first (`application/openmetrics-text;version=1.0.0,
 * …,text/plain;version=0.0.4;q=0.5,*∕*;q=0.1`); curl and other readers send `*∕*` or nothing,
 * and keep the plain text they always had.
 */
export function prefersOpenMetrics(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  let openMetrics = 0;
  let text = 0;
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q)) continue;
    if (type === 'application/openmetrics-text') openMetrics = Math.max(openMetrics, q);
    else if (type === 'text/plain' || type === 'text/*' || type === '*/*') text = Math.max(text, q);
  }
  return openMetrics > 0 && openMetrics >= text;
}

/**
 * The registry in the OpenMetrics 1.0 text format, with exemplars. Written here rather than by
 * prom-client's OpenMetrics registry mode because that mode renames every counter in place
 * (`x_total` → `x`) on the shared metric objects, which would change the plain-text exposition
 * for every later reader; this reads the same values (`getMetricsAsJSON`: collectors run once
 * per scrape, as for the text format) and writes the same series names.
 */
export async function openMetricsText(registry: Registry): Promise<string> {
  const families = await registry.getMetricsAsJSON();
  const lines: string[] = [];
  for (const family of families) {
    // OpenMetrics names a counter's family without `_total` and its sample with it; a counter
    // whose name lacks the suffix is exposed as `unknown` so its series keeps its name.
    const kind = String(family.type);
    const counter = kind === 'counter' && family.name.endsWith('_total');
    const type = kind === 'counter' && !counter ? 'unknown' : kind;
    const name = counter ? family.name.slice(0, -'_total'.length) : family.name;
    lines.push(`# HELP ${name} ${escapeHelp(family.help)}`, `# TYPE ${name} ${type}`);
    for (const v of family.values) {
      const sample = v as MetricValue<string> & {
        metricName?: string;
        exemplar?: { labelSet: Record<string, string | number>; value: number; timestamp?: number };
      };
      let line = `${sample.metricName ?? family.name}${labelText(sample.labels)} ${numberText(sample.value)}`;
      if (sample.exemplar?.labelSet !== undefined && Object.keys(sample.exemplar.labelSet).length > 0) {
        const { labelSet, value, timestamp } = sample.exemplar;
        line += ` # ${labelText(labelSet) || '{}'} ${numberText(value)}${timestamp === undefined ? '' : ` ${timestamp}`}`;
      }
      lines.push(line);
    }
  }
  lines.push('# EOF');
  return `${lines.join('\n')}\n`;
}

function labelText(labels: Record<string, string | number | undefined>): string {
  const parts = Object.entries(labels)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}="${String(value).replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function numberText(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}
