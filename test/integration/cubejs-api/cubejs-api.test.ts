import { runSuites } from '../support/suites';

// The cubejs-api suites, each with its own service, in one jest file (see support/suites.ts).
runSuites(__dirname, ['client', 'http']);
