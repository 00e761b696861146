import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import { runInNewContext } from 'node:vm';
import { collectStartupGarbageWhenQuiet, fullGarbageCollector } from '../../src/startup-garbage';

describe('fullGarbageCollector', () => {
  it('collects: an object reachable only through a weak reference is gone afterwards', async () => {
    const collect = fullGarbageCollector();
    const weak = new WeakRef({ payload: new Array(1000).fill('x') });
    // A WeakRef holds its target until the job that made it has ended.
    await new Promise((resolve) => setImmediate(resolve));
    collect();
    expect(weak.deref()).toBeUndefined();
  });

  it('leaves later contexts (Cube compiles models in them) without a gc global', () => {
    fullGarbageCollector();
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});

describe('collectStartupGarbageWhenQuiet', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const watch = (server: EventEmitter) => {
    const collect = jest.fn();
    const collected = jest.fn();
    const stop = collectStartupGarbageWhenQuiet(server as unknown as Server, { quietMs: 1000, collect, collected });
    return { collect, collected, stop };
  };

  it('collects once, after an interval in which no request started, and stops watching', () => {
    const server = new EventEmitter();
    const { collect, collected } = watch(server);
    jest.advanceTimersByTime(500);
    server.emit('request');
    jest.advanceTimersByTime(500);
    expect(collect).not.toHaveBeenCalled();
    jest.advanceTimersByTime(999);
    expect(collect).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(collect).toHaveBeenCalledTimes(1);
    expect(collected).toHaveBeenCalledWith(expect.objectContaining({ ms: expect.any(Number), heapBefore: expect.any(Number) }));
    expect(server.listenerCount('request')).toBe(0);
    jest.advanceTimersByTime(10_000);
    expect(collect).toHaveBeenCalledTimes(1);
  });

  it('waits as long as requests keep coming', () => {
    const server = new EventEmitter();
    const { collect } = watch(server);
    for (let i = 0; i < 20; i++) {
      server.emit('request');
      jest.advanceTimersByTime(900);
    }
    expect(collect).not.toHaveBeenCalled();
    jest.advanceTimersByTime(2000);
    expect(collect).toHaveBeenCalledTimes(1);
  });

  it('never collects once stopped (shutdown)', () => {
    const server = new EventEmitter();
    const { collect, stop } = watch(server);
    stop();
    jest.advanceTimersByTime(10_000);
    expect(collect).not.toHaveBeenCalled();
    expect(server.listenerCount('request')).toBe(0);
  });
});
