/**
 * The few choices every trajwatch dashboard shares, expressed with Grafana's own builders
 * (`@grafana/grafana-foundation-sdk`): one Prometheus datasource, how a time series, stat and
 * table look, the variable kinds used, and `buildDashboard`, which numbers the panels and hands
 * the result over as `@grafana/schema`'s `Dashboard` so that `tsc --noEmit` rejects a dashboard
 * Grafana's schema does not describe.
 */
import type * as schema from '@grafana/schema';
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import * as common from '@grafana/grafana-foundation-sdk/common';
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder, PromQueryFormat } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as StatBuilder } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as TableBuilder } from '@grafana/grafana-foundation-sdk/table';
import { PanelBuilder as TimeseriesBuilder } from '@grafana/grafana-foundation-sdk/timeseries';

/**
 * A type as it is written in JSON: every enum replaced by the values it stands for. The SDK
 * and `@grafana/schema` each declare their own enums (e.g. `SpecialValueMatch`), and
 * TypeScript never lets one package's enum stand for another's even where the values are the
 * same; in the JSON Grafana reads, only the values exist.
 */
export type AsJson<T> = 0 extends 1 & T
  ? T // any
  : unknown extends T
    ? T
    : T extends string
      ? `${T}`
      : T extends number
        ? number extends T
          ? number
          : `${T}` extends `${infer N extends number}`
            ? N
            : number
        : T extends boolean | null | undefined
          ? T
          : T extends readonly (infer U)[]
            ? AsJson<U>[]
            : T extends object
              ? { [K in keyof T]: AsJson<T[K]> }
              : T;

/** A dashboard in `@grafana/schema`'s model (Grafana's own TypeScript types), as JSON. */
export type Dashboard = AsJson<schema.Dashboard>;

/** The provisioned Prometheus datasource (see dashboards/provisioning/datasources). */
export const DATASOURCE = { type: 'prometheus', uid: 'trajwatch-prometheus' } as const;

const DEFAULT_HEIGHT = 8;

/** One query of a panel; `legend` is Grafana's legendFormat (e.g. `{{question}}`). */
export interface QuerySpec {
  expr: string;
  legend?: string;
  /** Fetch exemplars too (time series over an exemplar-carrying counter): Grafana draws them as points. */
  exemplar?: true;
}

/**
 * Prometheus queries with refIds A, B, …: range queries for a time series; instant ones for a
 * stat or a table (a table asks for the table format, one row per series).
 */
function targets(kind: 'range' | 'instant' | 'table', queries: QuerySpec[]): DataqueryBuilder[] {
  return queries.map((q, i) => {
    const t = new DataqueryBuilder()
      .refId(String.fromCharCode(65 + i))
      .datasource(DATASOURCE)
      .expr(q.expr);
    if (q.legend !== undefined) t.legendFormat(q.legend);
    if (kind === 'range') t.range();
    else t.instant();
    if (kind === 'table') t.format(PromQueryFormat.Table);
    if (q.exemplar === true) t.exemplar(true);
    return t;
  });
}

/** A time series panel: legend as a table on the right with the last value, tooltip over all series. */
export function timeseries(title: string, description: string, queries: QuerySpec[], unit: string, width = 12): TimeseriesBuilder {
  return new TimeseriesBuilder()
    .title(title)
    .description(description)
    .datasource(DATASOURCE)
    .span(width)
    .height(DEFAULT_HEIGHT)
    .unit(unit)
    .targets(targets('range', queries))
    .legend(
      new common.VizLegendOptionsBuilder()
        .displayMode(common.LegendDisplayMode.Table)
        .placement(common.LegendPlacement.Right)
        .showLegend(true)
        .calcs(['lastNotNull']),
    )
    .tooltip(new common.VizTooltipOptionsBuilder().mode(common.TooltipDisplayMode.Multi).sort(common.SortOrder.Descending));
}

/** A stat panel: the last value of each series, coloured, with its sparkline. */
export function stat(title: string, description: string, queries: QuerySpec[], unit: string, width = 6): StatBuilder {
  return new StatBuilder()
    .title(title)
    .description(description)
    .datasource(DATASOURCE)
    .span(width)
    .height(DEFAULT_HEIGHT)
    .unit(unit)
    .targets(targets('instant', queries))
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).fields('').values(false))
    .colorMode(common.BigValueColorMode.Value)
    .graphMode(common.BigValueGraphMode.Area)
    .textMode(common.BigValueTextMode.Auto);
}

/**
 * A count of events over the range, as a whole number: increase() extrapolates to the range's
 * edges and gives fractions (111.36 alarms), so the count is rounded and shown without decimals.
 */
export function countStat(title: string, description: string, expr: string, width = 6): StatBuilder {
  return stat(title, description, [{ expr: `round(${expr})` }], 'none', width).decimals(0);
}

/** A table of instant values, largest first. */
export function table(title: string, description: string, queries: QuerySpec[], width = 12): TableBuilder {
  return new TableBuilder()
    .title(title)
    .description(description)
    .datasource(DATASOURCE)
    .span(width)
    .height(10)
    .targets(targets('table', queries))
    .showHeader(true)
    .sortBy([new common.TableSortByFieldStateBuilder().displayName('Value').desc(true)]);
}

/** A multi-select variable over one label of one metric, "All" selected by default. */
export function labelVariable(name: string, label: string, metric: string): dashboard.QueryVariableBuilder {
  const query = `label_values(${metric}, ${name})`;
  return (
    new dashboard.QueryVariableBuilder(name)
      .label(label)
      .datasource(DATASOURCE)
      .query({ query, refId: `var-${name}` })
      .definition(query)
      .includeAll(true)
      .multi(true)
      // What `$name` expands to when "All" is chosen: a regex matching every value, even none.
      .allValue('.*')
      .current({ text: ['All'], value: ['$__all'] })
      .refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
      .sort(dashboard.VariableSort.AlphabeticalAsc)
  );
}

/** A free-text variable: the operator types a value, e.g. where the trace backend is; `value` is the default. */
export function textboxVariable(name: string, label: string, description: string, value: string): dashboard.TextBoxVariableBuilder {
  return new dashboard.TextBoxVariableBuilder(name)
    .label(label)
    .description(description)
    .defaultValue(value)
    .current({ text: value, value })
    .hide(dashboard.VariableHide.DontHide);
}

/** A Prometheus query as `@grafana/schema` describes a panel's query (refId required), with its expression. */
type PromQuery = AsJson<schema.DataQuery> & { expr: string };

/**
 * The SDK types a panel's targets opaquely (any datasource's query) and the schema as plain
 * objects; trajwatch's are all Prometheus queries built by `targets` above, and this holds
 * each to the schema's query type (refId required) plus an expression, throwing otherwise.
 */
function promQuery(q: object): PromQuery {
  if (!('refId' in q && typeof q.refId === 'string' && 'expr' in q && typeof q.expr === 'string'))
    throw new Error(`a panel query without a refId or expr: ${JSON.stringify(q)}`);
  return { ...q, refId: q.refId, expr: q.expr };
}

function withQueries(p: dashboard.Panel) {
  return { ...p, targets: (p.targets ?? []).map(promQuery) };
}

const isRow = (p: dashboard.Panel | dashboard.RowPanel): p is dashboard.RowPanel => p.type === 'row';

/** A row and the panels under it, laid out left to right by the SDK, wrapping at 24 columns. */
export interface RowSpec {
  title: string;
  panels: cog.Builder<dashboard.Panel>[];
}

export interface DashboardSpec {
  uid: string;
  title: string;
  description: string;
  tags: string[];
  variables?: cog.Builder<dashboard.VariableModel>[];
  rows: RowSpec[];
}

/**
 * Builds a dashboard with what every trajwatch dashboard shares (last hour, 30 s refresh,
 * shared crosshair) and returns it as `@grafana/schema`'s `Dashboard`: the return type is the
 * type check (what the SDK built must be a dashboard in Grafana's schema). Each panel goes flat after its row (an expanded row's panels sit at the top
 * level in Grafana's model; only a collapsed row nests them). Panels and rows are numbered
 * from 1: ids must be unique within a dashboard and the SDK leaves them to the caller.
 */
export function buildDashboard(spec: DashboardSpec): Dashboard {
  const builder = new dashboard.DashboardBuilder(spec.title)
    .uid(spec.uid)
    .description(spec.description)
    .tags(spec.tags)
    .timezone('browser')
    .editable()
    .tooltip(dashboard.DashboardCursorSync.Crosshair)
    .time({ from: 'now-1h', to: 'now' })
    .refresh('30s')
    .version(1)
    .variables(spec.variables ?? []);
  for (const row of spec.rows) {
    builder.withRow(new dashboard.RowBuilder(row.title));
    for (const p of row.panels) builder.withPanel(p);
  }
  const built = builder.build();
  for (const [i, p] of (built.panels ?? []).entries()) p.id = i + 1;
  // The SDK types `gnetId` (a grafana.com dashboard id) as a string where the schema has a
  // number; trajwatch never sets it. Annotations: DashboardSpec has none to give, and the
  // SDK's empty container lacks the list Grafana writes.
  const { gnetId: _unset, annotations: _none, panels, ...rest } = built;
  return { ...rest, annotations: { list: [] }, panels: (panels ?? []).map((p) => (isRow(p) ? { ...p, panels: p.panels.map(withQueries) } : withQueries(p))) };
}
