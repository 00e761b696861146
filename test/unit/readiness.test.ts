import { ModelsInvalid } from '../../src/cube/models/problems';
import { createReadiness } from '../../src/readiness';
import type { Warehouse } from '../../src/warehouse/connection';
import type { CubeService } from '../../src/cube/service';

const answering = { ping: () => Promise.resolve() } as unknown as Warehouse;
const CATCHING_UP = 'the rollups are being brought up to the data the service started on';

function cubeWith(caughtUp: Promise<void>, ready: Promise<void> = Promise.resolve()) {
  return { models: { ready: () => ready }, caughtUp: () => caughtUp } as unknown as Pick<CubeService, 'models' | 'caughtUp'>;
}

describe('readiness and the start’s catch-up with the data', () => {
  it('is not ready while the catch-up runs, and ready once it settled', async () => {
    let settle: () => void = () => undefined;
    const readiness = createReadiness({ warehouse: answering, cube: cubeWith(new Promise<void>((resolve) => (settle = resolve))) });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await readiness.check()).toEqual([CATCHING_UP]);
    settle();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await readiness.check()).toEqual([]);
  });

  it('names only the models when they failed, not a catch-up that cannot happen', async () => {
    const failed = Promise.reject(new ModelsInvalid('schema', []));
    failed.catch(() => undefined);
    const readiness = createReadiness({ warehouse: answering, cube: cubeWith(new Promise<void>(() => undefined), failed) });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await readiness.check()).toEqual(['the models failed to compile']);
  });
});
