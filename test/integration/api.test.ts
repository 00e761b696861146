import { runSuites } from './support/suites';

// The data API's suites (keys, meta, load, the client, the OpenAPI document), the query language's and the IP
// database's places, in one jest file: as three files each loaded Cube, compiled the models and started the default
// service once more, 9-10 s of CPU a file (see support/suites.ts and docs/testing.md). The demo data's suite runs in
// pages-export-derive.test.ts, which evens out the two workers.
// warehouse/geo first: its load runs with no other service of the file open, as in a file of its own, and its
// afterAll removes the load's record before the suites after it start theirs.
runSuites(__dirname, [
  'warehouse/geo',
  'auth.security',
  'client',
  'large-answer',
  'load.error',
  'load.happy',
  'load.timeout',
  'meta.happy',
  'openapi',
  'typed-answers',
  'query-language/date-phrases',
  'query-language/filters',
  'query-language/float-sums',
  'query-language/funnel',
  'query-language/funnel-percent',
  'query-language/joins',
  'query-language/links-utm',
  'query-language/order-limit',
  'query-language/properties',
  'query-language/time',
  'query-language/truncation',
]);
