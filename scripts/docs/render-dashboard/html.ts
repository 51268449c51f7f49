// Draws a Grafana dashboard's panels as a static HTML page (inline SVG), from data already
// queried from Prometheus. No Grafana server is packaged here; this stands in for a screenshot.

/** One drawn series: a name (from legendFormat) and its points (unix seconds, value). */
export interface SeriesData {
  name: string;
  points: [number, number][];
}

export interface PanelData {
  type: 'timeseries' | 'stat' | 'table' | 'row';
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  unit?: string;
  /** Value → text and Grafana colour name, from the panel's value mappings. */
  mappings?: Record<string, { text: string; color: string }>;
  series: SeriesData[];
  /** For tables: column names and rows. */
  table?: { columns: string[]; rows: string[][] };
}

const COL_PX = 66;
const ROW_PX = 30;
const COLORS = ['#73bf69', '#f2cc0c', '#5794f2', '#ff780a', '#f2495c', '#b877d9', '#8ab8ff', '#fade2a'];

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

function fmt(v: number, unit: string | undefined): string {
  if (!Number.isFinite(v)) return String(v);
  if (unit === 'ops') return `${v.toFixed(v < 10 ? 2 : 0)}/s`;
  if (unit === 'bytes') return `${(v / 1024 / 1024).toFixed(1)} MiB`;
  return Number.isInteger(v) ? String(v) : v.toFixed(2);
}

function chart(p: PanelData, w: number, h: number): string {
  const all = p.series.flatMap((s) => s.points);
  if (all.length === 0) return `<div class="nodata">No data</div>`;
  const xs = all.map((q) => q[0]);
  const ys = all.map((q) => q[1]);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const y1 = Math.max(...ys, 0) * 1.1 || 1;
  const left = 52;
  const bottom = 20;
  const plotW = w - left - 8;
  const plotH = h - bottom - 6;
  const px = (t: number) => left + ((t - x0) / (x1 - x0 || 1)) * plotW;
  const py = (v: number) => 4 + plotH - (v / y1) * plotH;
  const grid = [0, 0.5, 1]
    .map(
      (f) =>
        `<line x1="${left}" x2="${left + plotW}" y1="${py(y1 * f)}" y2="${py(y1 * f)}" class="grid"/><text x="${left - 4}" y="${py(y1 * f) + 4}" class="axis" text-anchor="end">${esc(fmt(y1 * f, p.unit))}</text>`,
    )
    .join('');
  const times = [x0, (x0 + x1) / 2, x1]
    .map((t) => `<text x="${px(t)}" y="${h - 4}" class="axis" text-anchor="middle">${new Date(t * 1000).toISOString().slice(11, 19)}</text>`)
    .join('');
  const lines = p.series
    .map(
      (s, i) =>
        `<polyline fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="2" points="${s.points.map(([t, v]) => `${px(t).toFixed(1)},${py(v).toFixed(1)}`).join(' ')}"/>`,
    )
    .join('');
  return `<svg width="${w}" height="${h}">${grid}${times}${lines}</svg>`;
}

function legend(p: PanelData): string {
  return `<div class="legend">${p.series
    .map((s, i) => `<span><i style="background:${COLORS[i % COLORS.length]}"></i>${esc(s.name)} <b>${esc(fmt(s.points.at(-1)?.[1] ?? NaN, p.unit))}</b></span>`)
    .join('')}</div>`;
}

/** Grafana's dark-theme values for the colour names value mappings use. */
const GRAFANA_COLORS: Record<string, string> = { green: '#73bf69', red: '#f2495c', yellow: '#fade2a', orange: '#ff9830' };

function body(p: PanelData, w: number, h: number): string {
  switch (p.type) {
    case 'timeseries':
      return chart(p, w, h - (p.series.length > 0 ? 22 * Math.ceil(p.series.length / 3) : 0)) + (p.series.length > 0 ? legend(p) : '');
    case 'stat':
      if (p.series.length === 0) return `<div class="nodata">No data</div>`;
      return `<div class="stats">${p.series
        .map((s) => {
          const v = s.points.at(-1)?.[1] ?? NaN;
          const mapped = p.mappings?.[String(v)];
          const color = mapped === undefined ? '' : ` style="color:${GRAFANA_COLORS[mapped.color] ?? mapped.color}"`;
          return `<div class="stat"><div class="big"${color}>${esc(mapped?.text ?? fmt(v, p.unit))}</div><div class="small">${esc(s.name)}</div></div>`;
        })
        .join('')}</div>`;
    case 'table':
      if (p.table === undefined || p.table.rows.length === 0) return `<div class="nodata">No data</div>`;
      return `<table><tr>${p.table.columns.map((c) => `<th>${esc(c)}</th>`).join('')}</tr>${p.table.rows
        .map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`)
        .join('')}</table>`;
    case 'row':
      return '';
  }
}

/** The whole page: panels absolutely placed on Grafana's 24-column grid. */
export function dashboardHtml(title: string, subtitle: string, panels: PanelData[]): string {
  const height = Math.max(...panels.map((p) => (p.gridPos.y + p.gridPos.h) * ROW_PX)) + 70;
  const boxes = panels
    .map((p) => {
      const [x, y, w, h] = [p.gridPos.x * COL_PX, p.gridPos.y * ROW_PX + 60, p.gridPos.w * COL_PX - 8, p.gridPos.h * ROW_PX - 8];
      if (p.type === 'row') return `<div class="row" style="left:${x}px;top:${y}px;width:${w}px">${esc(p.title)}</div>`;
      return `<div class="panel" style="left:${x}px;top:${y}px;width:${w}px;height:${h}px"><div class="title">${esc(p.title)}</div>${body(p, w - 16, h - 34)}</div>`;
    })
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;background:#111217;color:#ccccdc;font:13px system-ui,sans-serif;width:${24 * COL_PX + 8}px;height:${height}px;position:relative}
h1{font-size:18px;margin:0;padding:14px 8px 0;color:#fff}h1 small{font-weight:normal;color:#8e8e9e;font-size:12px;margin-left:12px}
.panel{position:absolute;background:#181b1f;border:1px solid #2c3235;border-radius:3px;padding:6px 8px;box-sizing:border-box;overflow:hidden}
.title{font-weight:600;color:#fff;margin-bottom:6px}.row{position:absolute;font-weight:600;font-size:15px;color:#fff;padding-top:6px}
.nodata{color:#8e8e9e;text-align:center;padding-top:40px}.grid{stroke:#2c3235}.axis{fill:#8e8e9e;font-size:10px}
.legend span{display:inline-block;margin-right:14px;font-size:11px}.legend i{display:inline-block;width:10px;height:3px;margin-right:4px;vertical-align:middle}
.stats{display:flex;gap:18px;justify-content:center;flex-wrap:wrap}.stat{text-align:center}.big{font-size:30px;color:#73bf69;font-weight:600}.small{color:#8e8e9e}
table{border-collapse:collapse;width:100%;font-size:12px}th,td{text-align:left;padding:3px 6px;border-bottom:1px solid #2c3235}th{color:#6e9fff}
</style></head><body><h1>${esc(title)}<small>${esc(subtitle)}</small></h1>${boxes}</body></html>`;
}
