import { runSuites } from '../support/suites';

// The rollups suites, each with its own service, in one jest file (see support/suites.ts).
runSuites(__dirname, ['build-limits', 'funnel-hourly', 'funnel-rollup', 'refresh-worker', 'restart']);
