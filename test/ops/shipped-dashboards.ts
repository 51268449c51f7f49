import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The generated dashboards as they ship (dashboards/json), read as plain JSON. */
export const DASHBOARD_DIR = new URL('../../dashboards/json/', import.meta.url).pathname;

export interface ShippedDashboard {
  file: string;
  json: {
    uid: string;
    title: string;
    panels: {
      id: number;
      type: string;
      title: string;
      datasource?: { type: string; uid: string };
      gridPos?: Record<string, number>;
      targets?: { refId: string; expr: string; datasource?: unknown; exemplar?: boolean }[];
    }[];
    templating: { list: { type: string; name: string; allValue?: string; definition?: string; query?: unknown }[] };
  };
}

export function readShippedDashboards(): ShippedDashboard[] {
  return readdirSync(DASHBOARD_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, json: JSON.parse(readFileSync(join(DASHBOARD_DIR, file), 'utf8')) as ShippedDashboard['json'] }));
}

/** One query of one panel, with Grafana's variables expanded the way Grafana would for "All". */
export interface PanelQuery {
  dashboard: string;
  panel: string;
  refId: string;
  expr: string;
}

/** Stand-ins for Grafana's built-in interval variables in a short test run (1 s scrapes). */
const BUILTINS: Record<string, string> = { __rate_interval: '30s', __range: '10m', __interval: '5s' };

export function expandVariables(expr: string, variables: ShippedDashboard['json']['templating']['list']): string {
  return expr.replace(/\$(\w+)/g, (whole, name: string) => {
    const builtin = BUILTINS[name];
    if (builtin !== undefined) return builtin;
    const v = variables.find((x) => x.name === name);
    if (v?.allValue === undefined) throw new Error(`unknown or all-less variable ${whole} in ${expr}`);
    return v.allValue;
  });
}

export function panelQueries(dashboards: ShippedDashboard[]): PanelQuery[] {
  const out: PanelQuery[] = [];
  for (const { file, json } of dashboards) {
    for (const p of json.panels) {
      for (const t of p.targets ?? []) {
        out.push({ dashboard: file, panel: p.title, refId: t.refId, expr: expandVariables(t.expr, json.templating.list) });
      }
    }
  }
  return out;
}
