import { monitorEventLoop } from '../../src/event-loop';
import { createLogger } from '../../src/log';

const block = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until);
};
const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('event-loop monitor', () => {
  it('logs one JSON warning naming the delay when the loop is held past the threshold, and none below it', async () => {
    const lines: string[] = [];
    const monitor = monitorEventLoop({ logger: createLogger('info', (line) => lines.push(line)), warnMs: 250, windowMs: 100 });
    try {
      await tick(250);
      expect(lines).toEqual([]);
      block(600);
      await tick(250);
      const warnings = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'event loop delayed');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ level: 'warn', thresholdMs: 250 });
      expect(warnings[0].maxMs).toBeGreaterThanOrEqual(550);
      expect(monitor.worstMs()).toBeGreaterThanOrEqual(550);
    } finally {
      monitor.stop();
    }
  });
});
