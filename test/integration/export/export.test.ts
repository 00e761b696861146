import { runSuites } from '../support/suites';

// The export suites, each with its own service, in one jest file (see support/suites.ts).
runSuites(__dirname, ['export', 'streaming']);
