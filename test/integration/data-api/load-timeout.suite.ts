import path from 'node:path';
import { load } from '../support/api';
import { startService, type TestService } from '../support/service';

const SLOW_SCHEMA = path.join(__dirname, '..', 'fixtures', 'slow-schema');

describe('a query that outlives one "Continue wait" round', () => {
  let service: TestService;
  beforeAll(async () => {
    // Cube answers "Continue wait" after 1 s; the query takes about 4 s.
    service = await startService({ QUERY_TIMEOUT_SECONDS: '30' }, { continueWaitSeconds: 1, schemaPath: SLOW_SCHEMA });
  });
  afterAll(() => service.close());

  it('is waited for, so the client gets the result, never "Continue wait"', async () => {
    const res = await load(service, { measures: ['Slow.count'] }).expect(200);
    expect(res.body.data).toEqual([{ 'Slow.count': '8' }]);
  });
});

describe('a query that outlives the query timeout', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ QUERY_TIMEOUT_SECONDS: '2' }, { continueWaitSeconds: 1, schemaPath: SLOW_SCHEMA });
  });
  afterAll(() => service.close());

  it('answers 504 query_timeout with a JSON error', async () => {
    const query = { measures: ['Slow.count'], dimensions: ['Slow.number'] };
    const res = await load(service, query).expect(504);
    expect(res.body).toMatchObject({ code: 'query_timeout', error: expect.stringMatching(/2 s/) });
  });
});
