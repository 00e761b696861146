import { runSuites } from '../support/suites';

// The models suites, each with its own service, in one jest file (see support/suites.ts).
runSuites(__dirname, ['cube-fixtures', 'hot-reload', 'other-team', 'shared-compile', 'validate']);
