import { runSuites } from './support/suites';

// Five folders' suites (the query checks, errors, the cubejs-api, isolation, the result cache) in one jest file:
// as five files each loaded Cube and compiled the models once more, most of each file's time (see docs/testing.md).
runSuites(__dirname, [
  'query/actionable-errors',
  'query/dates',
  'query/shared-request-id',
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
]);
