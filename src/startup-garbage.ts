import type { Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How long no request may have started before the start-up's garbage is collected. */
export const STARTUP_GARBAGE_QUIET_MS = 5000;

/**
 * V8's full collection, as `--expose-gc` gives it. The flag is raised only
 * while one new context is made, for that context's `gc`, and lowered again
 * at once: Cube compiles models in vm contexts of its own, which must not
 * meet a `gc` global. A process started with `--expose-gc` keeps its own.
 */
export function fullGarbageCollector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as () => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

export interface StartupGarbageOptions {
  quietMs?: number;
  collect?: () => void;
  /** Told once the collection ran: how long it held the event loop, and the JS heap in use before and after, in bytes (V8 hands the freed pages back to the OS a moment later). */
  collected?(figures: { ms: number; heapBefore: number; heapAfter: number }): void;
}

/**
 * Collects the garbage of the start-up (the models' compile, the demo build)
 * once, as soon as no request has started for `quietMs`; then stops watching.
 *
 * Measured with `npm run bench:process`: a ready service holds 30–40 MB
 * of the start-up's garbage and a young generation grown to 32 MB for the
 * compile, until V8's memory reducer gets to it, which it had not 30 s
 * after ready in the runs measured, and had by 60 s (its timer waits for a
 * low allocation rate). A full collection at a quiet
 * moment frees the same at once; V8 shrinks the young generation when it
 * sees the low allocation rate of the quiet interval, which is why this
 * waits for one rather than collecting before "ready". It holds the event
 * loop for one full collection (tens of ms on two cores), so it waits until
 * no request is likely to be waiting behind it.
 */
export function collectStartupGarbageWhenQuiet(server: Server, options: StartupGarbageOptions = {}): () => void {
  const { quietMs = STARTUP_GARBAGE_QUIET_MS, collect = fullGarbageCollector(), collected } = options;
  let started = 0;
  let seen = 0;
  const onRequest = () => {
    started++;
  };
  const stop = () => {
    clearInterval(timer);
    server.off('request', onRequest);
  };
  const timer = setInterval(() => {
    if (started !== seen) {
      seen = started;
      return;
    }
    stop();
    const heapBefore = process.memoryUsage().heapUsed;
    const began = performance.now();
    collect();
    const ms = performance.now() - began;
    collected?.({ ms, heapBefore, heapAfter: process.memoryUsage().heapUsed });
  }, quietMs);
  timer.unref();
  server.on('request', onRequest);
  return stop;
}
