import { runSuites } from '../support/suites';

// The derive suites, each with its own service, in one jest file (see support/suites.ts).
runSuites(__dirname, ['import', 'user-agents', 'vectors']);
