/**
 * Makes every interval started until the returned function is called
 * unreferenced, so it cannot keep the process alive. For Cube 0.33's
 * constructor, which starts a 60 s interval (its tally of loads for
 * telemetry, outside dev mode) that nothing ever clears: a process whose
 * service has shut down would otherwise never exit by itself. Call the
 * returned function synchronously, before anything else can start a timer.
 */
export function unrefIntervals(): () => void {
  const original = globalThis.setInterval;
  const unreferenced = (...args: Parameters<typeof setInterval>) => original(...args).unref();
  globalThis.setInterval = Object.assign(unreferenced, original) as typeof setInterval;
  return () => {
    globalThis.setInterval = original;
  };
}
