/**
 * The slice of Grafana's dashboard model (schemaVersion 39) that trajwatch's dashboards use,
 * with small builders. Typed here rather than through a Grafana SDK to keep the generated JSON
 * exactly what a reader of this file expects.
 */

/** The provisioned Prometheus datasource (see dashboards/provisioning/datasources). */
export const DATASOURCE = { type: 'prometheus', uid: 'trajwatch-prometheus' } as const;
export type Datasource = typeof DATASOURCE;

export interface GridPos {
  h: number;
  w: number;
  x: number;
  y: number;
}

export interface Target {
  refId: string;
  datasource: Datasource;
  expr: string;
  legendFormat?: string;
  /** Instant queries feed tables and stats; range queries feed time series. */
  instant: boolean;
  range: boolean;
  format?: 'time_series' | 'table';
  /** Also fetch the series' exemplars (trace_id, finding_id): Grafana draws them as points. */
  exemplar?: true;
}

export interface ValueMapping {
  type: 'value';
  options: Record<string, { text: string; color: string; index: number }>;
}

export interface FieldConfig {
  defaults: { unit?: string; decimals?: number; min?: number; mappings?: ValueMapping[] };
  overrides: [];
}

export type PanelType = 'timeseries' | 'stat' | 'table';

export interface Panel {
  id: number;
  type: PanelType;
  title: string;
  description: string;
  datasource: Datasource;
  gridPos: GridPos;
  targets: Target[];
  fieldConfig: FieldConfig;
  options: Record<string, unknown>;
}

export interface RowPanel {
  id: number;
  type: 'row';
  title: string;
  collapsed: false;
  gridPos: GridPos;
  panels: [];
}

export interface QueryVariable {
  type: 'query';
  name: string;
  label: string;
  datasource: Datasource;
  query: { query: string; refId: string };
  definition: string;
  includeAll: true;
  multi: true;
  /** What `$name` expands to when "All" is chosen: a regex matching every value, even none. */
  allValue: '.*';
  current: { text: string[]; value: string[] };
  refresh: 2;
  sort: 1;
}

/**
 * A free-text variable (Grafana's `textbox`): the operator types a value, e.g. where the trace
 * backend is; `query` is the default.
 */
export interface TextboxVariable {
  type: 'textbox';
  name: string;
  label: string;
  description: string;
  query: string;
  current: { text: string; value: string };
  hide: 0;
}

export type Variable = QueryVariable | TextboxVariable;

export interface Dashboard {
  uid: string;
  title: string;
  description: string;
  tags: string[];
  timezone: 'browser';
  schemaVersion: 39;
  version: 1;
  editable: true;
  graphTooltip: 1;
  time: { from: string; to: string };
  refresh: string;
  annotations: { list: [] };
  templating: { list: Variable[] };
  panels: (Panel | RowPanel)[];
}

/** One query of a panel; `legend` is Grafana's legendFormat (e.g. `{{question}}`). */
export interface QuerySpec {
  expr: string;
  legend?: string;
  /** Fetch exemplars too (time series panels over an exemplar-carrying counter). */
  exemplar?: true;
}

/** A panel before layout: the builders below fill in ids and positions. */
export interface PanelSpec {
  type: PanelType;
  title: string;
  description: string;
  queries: QuerySpec[];
  unit?: string;
  /** Width in Grafana's 24-column grid. */
  width: number;
  height?: number;
  mappings?: ValueMapping[];
}

export interface RowSpec {
  title: string;
  panels: PanelSpec[];
}

export interface DashboardSpec {
  uid: string;
  title: string;
  description: string;
  tags: string[];
  variables?: Variable[];
  rows: RowSpec[];
}

const DEFAULT_HEIGHT = 8;
const GRID_WIDTH = 24;

/** A multi-select variable over one label of one metric, "All" selected by default. */
export function labelVariable(name: string, label: string, metric: string): QueryVariable {
  const query = `label_values(${metric}, ${name})`;
  return {
    type: 'query',
    name,
    label,
    datasource: DATASOURCE,
    query: { query, refId: `var-${name}` },
    definition: query,
    includeAll: true,
    multi: true,
    allValue: '.*',
    current: { text: ['All'], value: ['$__all'] },
    refresh: 2,
    sort: 1,
  };
}

export function textboxVariable(name: string, label: string, description: string, value: string): TextboxVariable {
  return { type: 'textbox', name, label, description, query: value, current: { text: value, value }, hide: 0 };
}

export function timeseries(title: string, description: string, queries: QuerySpec[], unit: string, width = 12): PanelSpec {
  return { type: 'timeseries', title, description, queries, unit, width };
}

export function stat(title: string, description: string, queries: QuerySpec[], unit: string, width = 6): PanelSpec {
  return { type: 'stat', title, description, queries, unit, width };
}

export function table(title: string, description: string, queries: QuerySpec[], width = 12): PanelSpec {
  return { type: 'table', title, description, queries, width, height: 10 };
}

function panelOptions(type: PanelType): Record<string, unknown> {
  switch (type) {
    case 'timeseries':
      return { legend: { displayMode: 'table', placement: 'right', showLegend: true, calcs: ['lastNotNull'] }, tooltip: { mode: 'multi', sort: 'desc' } };
    case 'stat':
      return { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'value', graphMode: 'area', textMode: 'auto' };
    case 'table':
      return { showHeader: true, sortBy: [{ displayName: 'Value', desc: true }] };
  }
}

function targets(type: PanelType, queries: QuerySpec[]): Target[] {
  const instant = type !== 'timeseries';
  return queries.map((q, i) => ({
    refId: String.fromCharCode(65 + i),
    datasource: DATASOURCE,
    expr: q.expr,
    ...(q.legend === undefined ? {} : { legendFormat: q.legend }),
    instant,
    range: !instant,
    ...(type === 'table' ? { format: 'table' as const } : {}),
    ...(q.exemplar === true && type === 'timeseries' ? { exemplar: true as const } : {}),
  }));
}

/**
 * Lays rows and panels out left to right, wrapping at the grid's 24 columns, and numbers
 * every panel (ids are unique within a dashboard, as Grafana requires).
 */
export function buildDashboard(spec: DashboardSpec): Dashboard {
  const panels: (Panel | RowPanel)[] = [];
  let id = 1;
  let y = 0;
  for (const row of spec.rows) {
    panels.push({ id: id++, type: 'row', title: row.title, collapsed: false, gridPos: { h: 1, w: GRID_WIDTH, x: 0, y }, panels: [] });
    y += 1;
    let x = 0;
    let rowHeight = 0;
    for (const p of row.panels) {
      const h = p.height ?? DEFAULT_HEIGHT;
      if (x + p.width > GRID_WIDTH) {
        y += rowHeight;
        x = 0;
        rowHeight = 0;
      }
      panels.push({
        id: id++,
        type: p.type,
        title: p.title,
        description: p.description,
        datasource: DATASOURCE,
        gridPos: { h, w: p.width, x, y },
        targets: targets(p.type, p.queries),
        fieldConfig: {
          defaults: {
            ...(p.unit === undefined ? {} : { unit: p.unit }),
            ...(p.mappings === undefined ? {} : { mappings: p.mappings }),
          },
          overrides: [],
        },
        options: panelOptions(p.type),
      });
      x += p.width;
      rowHeight = Math.max(rowHeight, h);
    }
    y += rowHeight;
  }
  return {
    uid: spec.uid,
    title: spec.title,
    description: spec.description,
    tags: spec.tags,
    timezone: 'browser',
    schemaVersion: 39,
    version: 1,
    editable: true,
    graphTooltip: 1,
    time: { from: 'now-1h', to: 'now' },
    refresh: '30s',
    annotations: { list: [] },
    templating: { list: spec.variables ?? [] },
    panels,
  };
}
