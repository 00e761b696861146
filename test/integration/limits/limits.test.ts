import { runSuites } from '../support/suites';

// The limits suites, each with its own service, in one jest file (see support/suites.ts).
runSuites(__dirname, ['amplification', 'clickhouse-limits', 'http', 'query-size', 'rate-limit', 'redis', 'row-limits-per-service', 'warehouse']);
