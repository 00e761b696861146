import { runSuites } from './support/suites';

// Four folders' suites (metrics, imports the service follows, abuse, the projections) in one jest file: as four
// files each loaded Cube and compiled the models once more, most of each file's time (see docs/testing.md).
// abuse first: it fails when the event loop is held over 1 s, so it runs as it did as a file of its own, on a fresh heap.
runSuites(__dirname, ['abuse/abuse.security', 'observability/metrics', 'import/answers-follow', 'warehouse/projections']);
