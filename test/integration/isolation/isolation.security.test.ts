import { runSuites } from '../support/suites';

// The isolation suites, each with its own service, in one jest file (see support/suites.ts).
runSuites(__dirname, ['cubes.security', 'properties.security']);
