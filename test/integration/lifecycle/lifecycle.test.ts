import { runSuites } from '../support/suites';

// The lifecycle suites, each with its own service, in one jest file (see support/suites.ts).
runSuites(__dirname, ['connection-flood', 'fair-queue', 'health', 'shutdown']);
