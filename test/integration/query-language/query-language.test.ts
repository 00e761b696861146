import { runSuites } from '../support/suites';

// The query language's suites, each with its own service, in one jest file (see support/suites.ts).
runSuites(__dirname, ['filters', 'float-sums', 'funnel', 'funnel-percent', 'order-limit', 'properties', 'time', 'truncation']);
