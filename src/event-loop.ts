import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Logger } from './log';

/**
 * Watches how long the event loop was held up: every request shares it, so
 * a long synchronous piece of work (Cube building a huge query, say) delays
 * all of them and cannot be cut short by any timeout. Each window's worst
 * delay above the threshold is logged as a warning.
 */
export interface EventLoopMonitor {
  /** Worst delay of the last finished window, in ms. */
  lastWindowMaxMs(): number;
  /** Worst delay since start, in ms. */
  worstMs(): number;
  stop(): void;
}

export interface EventLoopMonitorOptions {
  logger: Logger;
  warnMs: number;
  windowMs?: number;
}

export function monitorEventLoop({ logger, warnMs, windowMs = 1000 }: EventLoopMonitorOptions): EventLoopMonitor {
  // Sampling every 10 ms, so a delay is seen to within that.
  const histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let last = 0;
  let worst = 0;
  // Read in the check phase: a sampling tick that was held up is due in the
  // same timers phase as this interval and may run after it; read first, it
  // would be lost, since a reset drops the first delay sampled after it.
  const timer = setInterval(() => setImmediate(closeWindow), windowMs);
  timer.unref();
  const closeWindow = () => {
    last = histogram.max / 1e6;
    worst = Math.max(worst, last);
    if (last > warnMs) {
      logger.warn('event loop delayed', {
        maxMs: Math.round(last),
        p99Ms: Math.round(histogram.percentile(99) / 1e6),
        meanMs: Math.round(histogram.mean / 1e6),
        thresholdMs: warnMs,
      });
    }
    histogram.reset();
  };
  return {
    lastWindowMaxMs: () => last,
    worstMs: () => worst,
    stop: () => {
      clearInterval(timer);
      histogram.disable();
    },
  };
}
