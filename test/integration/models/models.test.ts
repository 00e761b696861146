import { runSuites } from '../support/suites';
import { removeModelDirs } from './support';

// The models suites, each with its own service, in one jest file (see support/suites.ts).
runSuites(__dirname, ['cube-fixtures', 'hot-reload', 'other-team', 'shared-compile', 'validate']);
// After the suites' own hooks (theirs are inside their describes), so no watcher sees its directory go.
afterAll(removeModelDirs);
