// Structural checks of the shipped Grafana dashboards: what Grafana's dashboard model needs
// to load and place every panel. (Their types are checked against @grafana/schema at compile
// time, dashboards/src/panels.ts; Grafana's server-side CUE validation is not packaged here;
// dashboards-prometheus.test.ts runs every query for real.)
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DASHBOARDS } from '../../dashboards/src/index.ts';
import { DATASOURCE } from '../../dashboards/src/panels.ts';
import { readShippedDashboards } from './shipped-dashboards.ts';

const shipped = readShippedDashboards();
const GRID_WIDTH = 24;
const PANEL_TYPES = new Set(['row', 'timeseries', 'stat', 'table']);

describe('shipped dashboards', () => {
  it('are exactly what dashboards/src generates (run `npm run dashboards` after editing)', () => {
    expect(shipped.map((d) => d.file)).toEqual(DASHBOARDS.map((d) => d.file).sort());
    for (const { file, build } of DASHBOARDS) {
      expect(shipped.find((d) => d.file === file)?.json, file).toEqual(JSON.parse(JSON.stringify(build())));
    }
  });

  it('have distinct uids (at most 40 characters) and titles', () => {
    const uids = shipped.map((d) => d.json.uid);
    expect(new Set(uids).size).toBe(uids.length);
    for (const uid of uids) expect(uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
    expect(new Set(shipped.map((d) => d.json.title)).size).toBe(shipped.length);
  });

  describe.each(shipped.map((d) => [d.file, d.json] as const))('%s', (_file, json) => {
    const panels = json.panels.filter((p) => p.type !== 'row');

    it('numbers panels uniquely and uses only known panel types', () => {
      const ids = json.panels.map((p) => p.id);
      expect(new Set(ids).size).toBe(ids.length);
      for (const p of json.panels) expect(PANEL_TYPES.has(p.type), `${p.title}: ${p.type}`).toBe(true);
    });

    it('gives every panel the provisioned datasource and at least one target with an expr', () => {
      expect(panels.length).toBeGreaterThan(0);
      for (const p of panels) {
        expect(p.datasource, p.title).toEqual(DATASOURCE);
        expect(p.targets?.length, p.title).toBeGreaterThan(0);
        const refIds = p.targets!.map((t) => t.refId);
        expect(new Set(refIds).size, p.title).toBe(refIds.length);
        for (const t of p.targets!) {
          expect(t.expr.trim(), `${p.title} ${t.refId}`).not.toBe('');
          expect(t.datasource, `${p.title} ${t.refId}`).toEqual(DATASOURCE);
        }
      }
    });

    it('places every panel inside the 24-column grid without overlaps', () => {
      const boxes = json.panels.map((p) => ({ title: p.title, ...(p.gridPos as { h: number; w: number; x: number; y: number }) }));
      for (const b of boxes) {
        for (const k of ['h', 'w', 'x', 'y'] as const) expect(Number.isInteger(b[k]), `${b.title}.${k}`).toBe(true);
        expect(b.w).toBeGreaterThan(0);
        expect(b.h).toBeGreaterThan(0);
        expect(b.x + b.w, b.title).toBeLessThanOrEqual(GRID_WIDTH);
      }
      for (const [i, a] of boxes.entries()) {
        for (const b of boxes.slice(i + 1)) {
          const overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
          expect(overlap, `${a.title} overlaps ${b.title}`).toBe(false);
        }
      }
    });

    it('uses only variables it defines (plus Grafana built-ins)', () => {
      const defined = new Set(json.templating.list.map((v) => v.name));
      for (const p of panels) {
        for (const t of p.targets!) {
          for (const [, name] of t.expr.matchAll(/\$(\w+)/g)) {
            expect(name!.startsWith('__') || defined.has(name!), `${p.title}: $${name}`).toBe(true);
          }
        }
      }
    });
  });

  it('the alarms dashboard filters by question, service and agent and shows calibration per question', () => {
    const alarms = shipped.find((d) => d.file === 'coordinator-alarms.json')!.json;
    expect(alarms.templating.list.map((v) => v.name)).toEqual(['question', 'service', 'agent', 'trace_url']);
    const exprs = alarms.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
    for (const by of ['question', 'service', 'agent'])
      expect(exprs.some((e) => e.includes(`sum by (${by}) (rate(trajwatch_coordinator_alarms_total`))).toBe(true);
    expect(exprs.some((e) => e.includes('trajwatch_calibration_certified'))).toBe(true);
    expect(exprs.some((e) => e.includes('action="escalate"'))).toBe(true);
  });

  it('the alarms dashboard shows exemplars on the alarm and findings rates, linked to traces at $trace_url', () => {
    const alarms = shipped.find((d) => d.file === 'coordinator-alarms.json')!.json;
    const withExemplars = alarms.panels.filter((p) => p.targets?.some((t) => t.exemplar === true));
    expect(withExemplars.map((p) => p.title)).toEqual(['Alarm rate by question', 'Alarm rate by service', 'Alarm rate by agent', 'Findings by analyst']);
    for (const p of withExemplars) {
      expect(p.type).toBe('timeseries');
      for (const t of p.targets!) expect(t.expr).toMatch(/trajwatch_(coordinator_alarms|findings)_total/);
    }
    // Exemplars only on the counters that carry them.
    const others = shipped.flatMap((d) => d.json.panels).filter((p) => !withExemplars.includes(p));
    expect(others.filter((p) => p.targets?.some((t) => t.exemplar === true))).toEqual([]);
    const traceUrl = alarms.templating.list.find((v) => v.name === 'trace_url')!;
    // No trace backend set: the exemplar opens trajwatch's own trajectory page for the trace id.
    expect(traceUrl).toMatchObject({ type: 'textbox', query: 'http://127.0.0.1:4320/trajectories/' });
    // The datasource's exemplar link: that variable, then the exemplar's trace_id (`$$` is a literal `$` in provisioning).
    const ds = parse(readFileSync(new URL('../../dashboards/provisioning/datasources/prometheus.yaml', import.meta.url), 'utf8')) as {
      datasources: { jsonData: { exemplarTraceIdDestinations: { name: string; url: string }[] } }[];
    };
    expect(ds.datasources[0]!.jsonData.exemplarTraceIdDestinations).toEqual([
      expect.objectContaining({ name: 'trace_id', url: '$${trace_url}$${__value.raw}' }),
    ]);
  });
});
