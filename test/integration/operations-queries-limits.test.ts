import { runSuites } from './support/suites';

// Eight folders' suites (abuse, metrics, imports the service follows and website events' imports, the projections; the query checks, errors, the
// cubejs-api, isolation, the result cache; the limits) in one jest file: as separate files each loaded Cube and
// compiled the models once more, 9-10 s of CPU a file (see support/suites.ts and docs/testing.md).
// abuse first: it fails when the event loop is held over 1 s, so it runs as it did as a file of its own, on a fresh heap.
// limits last: its suites abort slow statements on purpose, which chDB runs on until each service's close waits for
// them (Warehouse.close); last, none of them can run under another suite's timings even if a close did not wait.
runSuites(__dirname, [
  'abuse/abuse.security',
  'observability/metrics',
  'import/answers-follow',
  'import/web-events',
  'warehouse/projections',
  'query/actionable-errors',
  'query/dates',
  'query/shared-request-id',
  'errors/actionable',
  'errors/classification',
  'errors/paging-strings',
  'errors/unknown-members',
  'errors/warehouse-unavailable',
  'cubejs-api/client',
  'cubejs-api/http',
  'isolation/cubes.security',
  'isolation/properties.security',
  'result-cache/cube-cache',
  'result-cache/service',
  'limits/amplification',
  'limits/clickhouse-limits',
  'limits/http',
  'limits/query-size',
  'limits/rate-limit',
  'limits/redis',
  'limits/row-limits-per-service',
  'limits/warehouse',
]);
