import { runSuites } from './support/suites';

// The data API's suites (keys, meta, load, the client, the OpenAPI document, the demo data) and the query language's,
// in one jest file: as two files each loaded Cube, compiled the models and started the default service once more
// (see support/suites.ts and docs/testing.md).
runSuites(__dirname, [
  'auth.security',
  'client',
  'demo-data',
  'large-answer',
  'load.error',
  'load.happy',
  'load.timeout',
  'meta.happy',
  'openapi',
  'typed-answers',
  'query-language/filters',
  'query-language/float-sums',
  'query-language/funnel',
  'query-language/funnel-percent',
  'query-language/order-limit',
  'query-language/properties',
  'query-language/time',
  'query-language/truncation',
]);
