import { runSuites } from '../support/suites';

// The errors suites, each with its own service, in one jest file (see support/suites.ts).
runSuites(__dirname, ['classification', 'paging-strings', 'unknown-members', 'warehouse-unavailable']);
