// rdma-eventd's Grafana dashboard: the fleet at a glance, from the metrics that
// `rdma-eventctl metrics --textfile` gives node_exporter (docs/metrics.md, "Dashboard").
// Plain jsonnet (Debian 12's jsonnet 0.18; no grafonnet). rdma-eventd.json is generated from it
// and committed: edit this file, then run config/grafana/generate.sh.

// Every query is limited to the hosts the dashboard's variables select.
local sel = 'job=~"$job", instance=~"$instance"';

// The verdicts, from the least operator work to the most (docs/health.md, "Verdicts"), and
// the colour each is shown in.
local verdicts = ['healthy', 'degraded', 'down', 'flapping', 'gone', 'fatal'];
local colours = {
  healthy: 'green',
  degraded: 'yellow',
  down: 'orange',
  flapping: 'semi-dark-orange',
  gone: 'red',
  fatal: 'dark-red',
};

// The ports that count for their host's verdict (all but those down and never up), whose
// verdict matches MATCHER.
local counted(matcher) =
  '(rdma_eventd_port_health{%s, %s} and on (job, instance, device, port) rdma_eventd_port_in_service == 1)'
  % [sel, matcher];

// The hosts whose verdict (the worst of their counted ports') is verdicts[i]: a port in it and
// none in a worse one. 0 rather than no series when there is none.
local hosts_with_verdict(i) =
  local hosts(matcher) = 'count by (job, instance) %s' % counted(matcher);
  local worse = verdicts[i + 1:];
  local these = hosts('health="%s"' % verdicts[i]);
  (if worse == [] then 'count(%s) or vector(0)' % these
   else 'count(%s unless on (job, instance) %s) or vector(0)'
        % [these, hosts('health=~"%s"' % std.join('|', worse))]);

local datasource = { type: 'prometheus', uid: '${datasource}' };

local target(ref, expr, legend='', instant=false, table=false) = {
  datasource: datasource,
  refId: ref,
  expr: expr,
  legendFormat: legend,
  instant: instant,
  range: !instant,
} + (if table then { format: 'table' } else {});

local panel(id, type, title, description, grid, targets) = {
  id: id,
  type: type,
  title: title,
  description: description,
  datasource: datasource,
  gridPos: grid,
  targets: targets,
};

local grid(x, y, w, h) = { x: x, y: y, w: w, h: h };

// A table of instant series: the labels in COLUMNS, in that order, named as given; the rest
// hidden.
local table(id, title, description, grid, targets, columns, value=null) =
  panel(id, 'table', title, description, grid, targets) {
    local shown = [c[0] for c in columns] + (if value == null then [] else ['Value']),
    local names = { [c[0]]: c[1] for c in columns },
    transformations: [
      { id: 'merge', options: {} },
      {
        id: 'organize',
        options: {
          indexByName: { [shown[i]]: i for i in std.range(0, std.length(shown) - 1) },
          renameByName: names + (if value == null then {} else { Value: value.name }),
          excludeByName: { Time: true, __name__: true, job: true }
                         + (if value == null then { Value: true } else {}),
        },
      },
    ],
    fieldConfig: {
      defaults: { unit: if value == null then 'none' else value.unit },
      overrides: [],
    },
    options: { showHeader: true, cellHeight: 'sm' },
  };

// A graph of series over time, none drawn when a query returns nothing.
local graph(id, title, description, grid, targets, unit='short') =
  panel(id, 'timeseries', title, description, grid, targets) {
    fieldConfig: {
      defaults: {
        unit: unit,
        min: 0,
        custom: { drawStyle: 'line', lineInterpolation: 'stepAfter', fillOpacity: 10 },
      },
      overrides: [],
    },
    options: {
      legend: { displayMode: 'table', placement: 'right', calcs: ['max', 'lastNotNull'] },
      tooltip: { mode: 'multi', sort: 'desc' },
    },
  };

local hostsByVerdict = panel(
  1,
  'stat',
  'Hosts by verdict',
  "Each host under its verdict: the worst verdict of its ports that count (all but ports down and never up; docs/health.md). Hosts whose daemon does not report are under 'Daemons down'.",
  grid(0, 0, 14, 6),
  [
    target(std.char(std.codepoint('A') + i), hosts_with_verdict(i), verdicts[i], instant=true)
    for i in std.range(0, std.length(verdicts) - 1)
  ],
) {
  fieldConfig: {
    defaults: { unit: 'none', color: { mode: 'fixed', fixedColor: 'text' } },
    overrides: [
      {
        matcher: { id: 'byName', options: v },
        properties: [{ id: 'color', value: { mode: 'fixed', fixedColor: colours[v] } }],
      }
      for v in verdicts
    ],
  },
  options: {
    reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
    colorMode: 'background',
    graphMode: 'none',
    textMode: 'value_and_name',
    orientation: 'vertical',
    justifyMode: 'auto',
  },
};

local daemonsDown = table(
  2,
  'Daemons down',
  "Hosts of the job that do not report rdma-eventd's state: the follower cannot reach the daemon (rdma_eventd_up 0), Prometheus cannot scrape node_exporter (up 0), or node_exporter has no rdma-eventd metrics (the follower stopped or not installed).",
  grid(14, 0, 10, 6),
  [target(
    'A',
    std.join('\nor\n', [
      'label_replace(rdma_eventd_up{%s} == 0, "problem", "daemon not answering", "", "")' % sel,
      'label_replace(up{%s} == 0, "problem", "node_exporter not scraped", "", "")' % sel,
      'label_replace(up{%s} == 1 unless on (job, instance) rdma_eventd_up, "problem", "no rdma-eventd metrics", "", "")'
      % sel,
    ]),
    instant=true,
    table=true,
  )],
  [['instance', 'host'], ['problem', 'problem']],
);

local portsNotHealthy = table(
  3,
  'Ports not healthy',
  'Every port that counts for its host and whose verdict is not healthy: which host, device and port, its verdict and reason (docs/health.md, "Reasons"), and for how long.',
  grid(0, 6, 24, 8),
  [target(
    'A',
    'time() - (rdma_eventd_port_health_since_seconds{%s} * on (job, instance, device, port) group_left (health, reason) %s)'
    % [sel, counted('health!="healthy"')],
    instant=true,
    table=true,
  )],
  [['instance', 'host'], ['device', 'device'], ['port', 'port'], ['health', 'verdict'], ['reason', 'reason']],
  value={ name: 'for', unit: 's' },
);

local downsPerHour = graph(
  4,
  'Port downs per hour',
  "Times each port's link left active within the hour before each point (rdma_eventd_port_down_transitions_total); ports with none are not drawn.",
  grid(0, 14, 8, 8),
  [target(
    'A',
    'sum by (job, instance, device, port) (increase(rdma_eventd_port_down_transitions_total{%s}[1h])) > 0' % sel,
    '{{instance}} {{device}}/{{port}}',
  )],
);

local fatalEvents = graph(
  5,
  'Fatal events',
  "device_fatal events each device reported since its daemon started (rdma_eventd_device_events_total); a device's series appears with its first one. The device's ports are 'fatal' until it recovers.",
  grid(8, 14, 8, 8),
  [target(
    'A',
    'sum by (job, instance, device) (rdma_eventd_device_events_total{%s, event="device_fatal"})' % sel,
    '{{instance}} {{device}}',
  )],
);

local recordsLost = graph(
  6,
  'Records lost per hour',
  'Records the daemon dropped for subscribers that read too slowly, within the hour before each point (rdma_eventd_records_lost_total); hosts with none are not drawn.',
  grid(16, 14, 8, 8),
  [target(
    'A',
    'sum by (job, instance) (increase(rdma_eventd_records_lost_total{%s}[1h])) > 0' % sel,
    '{{instance}}',
  )],
);

local variable(name, label, query, allValue=null) = {
  type: 'query',
  name: name,
  label: label,
  datasource: datasource,
  query: query,
  definition: query,
  refresh: 2,  // on the time range's change
  includeAll: true,
  multi: true,
  sort: 1,
  current: {},
  options: [],
  hide: 0,
} + (if allValue == null then {} else { allValue: allValue });

{
  uid: 'rdma-eventd-fleet',
  title: 'rdma-eventd: fleet',
  description: "RDMA ports' health across the fleet, from rdma-eventd's metrics (docs/metrics.md).",
  tags: ['rdma-eventd', 'rdma'],
  editable: true,
  graphTooltip: 1,
  schemaVersion: 37,
  version: 1,
  time: { from: 'now-24h', to: 'now' },
  refresh: '1m',
  timezone: '',
  annotations: { list: [] },
  links: [],
  templating: {
    list: [
      {
        type: 'datasource',
        name: 'datasource',
        label: 'Data source',
        query: 'prometheus',
        current: {},
        hide: 0,
      },
      // The jobs that have rdma-eventd's metrics: "All" means these, not every job.
      variable('job', 'Job', 'label_values(rdma_eventd_up, job)'),
      // Every target of those jobs, also those that do not report (for 'Daemons down').
      variable('instance', 'Host', 'label_values(up{job=~"$job"}, instance)', allValue='.*'),
    ],
  },
  panels: [hostsByVerdict, daemonsDown, portsNotHealthy, downsPerHour, fatalEvents, recordsLost],
}
