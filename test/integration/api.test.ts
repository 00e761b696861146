import { runSuites } from './support/suites';

// The data API's suites (keys, meta, load, the client, the OpenAPI document, the demo data), in one jest file (see support/suites.ts).
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
]);
