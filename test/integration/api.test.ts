import { runBundle } from './support/suites';

// The suites of this file's folders (support/bundles.js).
runBundle(__filename);
