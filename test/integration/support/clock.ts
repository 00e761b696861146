/**
 * TEST_NOW (an ISO instant) sets the clock that the tests and the service in their process read, JavaScript's
 * Date (which Cube's relative date ranges count from), to that instant; it runs on from there at the real pace.
 * Timers keep the real clock. The engine's clock stays real: no statement of the service or of an oracle reads it
 * for an answer (docs/testing.md, "Dates").
 */
const now = process.env.TEST_NOW;
if (now !== undefined) {
  jest.useFakeTimers({
    now: new Date(now),
    advanceTimers: true,
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'requestAnimationFrame',
      'cancelAnimationFrame',
      'requestIdleCallback',
      'cancelIdleCallback',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  });
}
