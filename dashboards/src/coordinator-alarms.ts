import { MappingType, type ValueMap } from '@grafana/grafana-foundation-sdk/dashboard';
import { buildDashboard, countStat, type Dashboard, labelVariable, type QuerySpec, stat, table, textboxVariable, timeseries } from './panels.ts';

const ALARMS = 'trajwatch_coordinator_alarms_total';
const DECISIONS = 'trajwatch_decisions_total';
// Every alarm query honours the three dashboard filters.
const FILTER = 'question=~"$question",service=~"$service",agent=~"$agent"';
const RATE = '[$__rate_interval]';

const CERTIFIED: ValueMap = {
  type: MappingType.ValueToText,
  options: {
    '0': { text: 'not certified', color: 'red', index: 0 },
    '1': { text: 'certified', color: 'green', index: 1 },
  },
};

/**
 * Where a trace opens, given its id appended. With no trace backend set, trajwatch's own
 * trajectory page (`trajwatch label`, default port 4320: `/trajectories/<trace id>` opens the
 * trajectory holding the trace). With one: Jaeger's `http://HOST:16686/trace/`, or for Tempo
 * a Grafana Explore URL ending in the trace query, e.g.
 * `/explore?left={"datasource":"tempo","queries":[{"queryType":"traceql","query":"` + id.
 * The Prometheus datasource's exemplar link (dashboards/provisioning) is `${trace_url}` + the
 * exemplar's trace_id, so each exemplar point opens its trace.
 */
export const TRACE_URL_DEFAULT = 'http://127.0.0.1:4320/trajectories/';

/**
 * The queries of a time series over an exemplar-carrying counter, fetching exemplars too:
 * Grafana draws them as points whose tooltip links to the trace (the datasource's exemplar link, templated by `$trace_url`).
 */
function withExemplars(queries: QuerySpec[]): QuerySpec[] {
  return queries.map((q) => ({ ...q, exemplar: true as const }));
}

/**
 * The coordinator alarms dashboard: which questions raise alarms, where (service, agent),
 * what the decision policy did with them, and whether each question's judge is calibrated.
 */
export function coordinatorAlarms(): Dashboard {
  const calibration = stat(
    'Calibration status per question',
    'Whether each question has a current calibration certificate (1 certified, 0 not); an uncertified question cannot act, only escalate or record.',
    [{ expr: 'max by (question) (trajwatch_calibration_certified{question=~"$question"})', legend: '{{question}}' }],
    'none',
    24,
  )
    .mappings([CERTIFIED])
    // Room for every question of the battery on two lines.
    .height(7);
  return buildDashboard({
    uid: 'trajwatch-coordinator-alarms',
    title: 'trajwatch / Coordinator alarms',
    description: 'Coordinator alarms by question, service and agent; escalations; calibration per question.',
    tags: ['trajwatch', 'alarms'],
    variables: [
      labelVariable('question', 'Question', ALARMS),
      labelVariable('service', 'Service', ALARMS),
      labelVariable('agent', 'Agent', ALARMS),
      textboxVariable(
        'trace_url',
        'Trace URL prefix',
        "Prefix to which an exemplar's trace_id is appended: trajwatch label's /trajectories/ page (the default), a Jaeger /trace/ URL, or a Tempo Explore URL ending in the trace query.",
        TRACE_URL_DEFAULT,
      ),
    ],
    rows: [
      {
        title: 'Alarms',
        panels: [
          countStat('Alarms in range', 'Coordinator alarms raised in the selected time range.', `sum(increase(${ALARMS}{${FILTER}}[$__range]))`, 6),
          countStat(
            'Escalations in range',
            'Decisions that escalated to a person in the selected time range.',
            `sum(increase(${DECISIONS}{action="escalate",question=~"$question"}[$__range]))`,
            6,
          ),
          timeseries(
            'Alarm rate by question',
            'Alarms per second, by the question that raised them.',
            withExemplars([{ expr: `sum by (question) (rate(${ALARMS}{${FILTER}}${RATE}))`, legend: '{{question}}' }]),
            'ops',
            12,
          ),
          timeseries(
            'Alarm rate by service',
            'Alarms per second, by the service (resource service.name) of the trajectory.',
            withExemplars([{ expr: `sum by (service) (rate(${ALARMS}{${FILTER}}${RATE}))`, legend: '{{service}}' }]),
            'ops',
          ),
          timeseries(
            'Alarm rate by agent',
            'Alarms per second, by the agent named in the trajectory.',
            withExemplars([{ expr: `sum by (agent) (rate(${ALARMS}{${FILTER}}${RATE}))`, legend: '{{agent}}' }]),
            'ops',
          ),
          table(
            'Latest alarms by question, service and agent',
            'Alarms in the selected range per (question, service, agent), most first.',
            [{ expr: `sort_desc(round(sum by (question, service, agent) (increase(${ALARMS}{${FILTER}}[$__range]))))` }],
            24,
          ),
        ],
      },
      {
        title: 'Decisions and calibration',
        panels: [
          timeseries(
            'Decisions by action',
            'What the decision policy did: act, escalate or record.',
            [{ expr: `sum by (action) (rate(${DECISIONS}{question=~"$question"}${RATE}))`, legend: '{{action}}' }],
            'ops',
          ),
          timeseries(
            'Escalations by question',
            'Escalations per second, by question.',
            [{ expr: `sum by (question) (rate(${DECISIONS}{action="escalate",question=~"$question"}${RATE}))`, legend: '{{question}}' }],
            'ops',
          ),
          calibration,
        ],
      },
      {
        title: 'Candidates behind the alarms',
        panels: [
          timeseries(
            'L0 hits by pattern',
            'Inline L0 patterns fired (candidates, not verdicts).',
            [{ expr: `sum by (pattern) (rate(trajwatch_l0_hits_total${RATE}))`, legend: '{{pattern}}' }],
            'ops',
          ),
          timeseries(
            'Findings by analyst',
            'Findings emitted, by analyst.',
            withExemplars([{ expr: `sum by (analyst) (rate(trajwatch_findings_total${RATE}))`, legend: '{{analyst}}' }]),
            'ops',
          ),
        ],
      },
    ],
  });
}
