import { runSuites } from '../support/suites';

// The query checks' suites (errors that say what to change, dates, one x-request-id twice), in one jest file (see support/suites.ts).
runSuites(__dirname, ['actionable-errors', 'dates', 'shared-request-id']);
