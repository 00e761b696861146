import { runSuites } from '../support/suites';

// The result-cache suites, each with its own service, in one jest file (see support/suites.ts).
runSuites(__dirname, ['cube-cache', 'service']);
