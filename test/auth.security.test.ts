import request from 'supertest';
import { API_KEY } from './support/constants';
import { startService, type TestService } from './support/service';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

const routes = [
  { method: 'get' as const, path: '/v1/data/meta/' },
  { method: 'post' as const, path: '/v1/data/load/', body: { query: { measures: ['Downloads.count'] } } },
];

describe.each(routes)('$method $path', ({ method, path, body }) => {
  const send = (key?: string) => {
    const req = request(service.app)[method](path);
    if (key !== undefined) req.set('x-api-key', key);
    return body ? req.send(body) : req;
  };

  it('answers 401 with a JSON error when x-api-key is missing', async () => {
    const res = await send().expect(401).expect('content-type', /json/);
    expect(res.body).toMatchObject({ code: 'unauthorized', error: expect.any(String), requestId: expect.any(String) });
  });

  it('answers 401 when x-api-key is empty', async () => {
    await send('').expect(401);
  });

  it('answers 401 for a wrong key, one that differs only in case, a prefix and an extension of the key', async () => {
    for (const key of ['wrong-key-0123456789', API_KEY.toUpperCase(), API_KEY.slice(0, -1), `${API_KEY}x`]) {
      const res = await send(key).expect(401);
      expect(res.body.code).toBe('unauthorized');
    }
  });

  it('lets the configured key in', async () => {
    await send(API_KEY).expect(200);
  });

  it('does not accept the key in another header or in the query string', async () => {
    const req = request(service.app)[method](`${path}?x-api-key=${API_KEY}`).set('authorization', `Bearer ${API_KEY}`);
    await (body ? req.send(body) : req).expect(401);
  });
});

describe('several configured keys', () => {
  let multi: TestService;
  beforeAll(async () => {
    multi = await startService({ API_KEYS: 'first-key-aaaaaaaaaaaa, second-key-bbbbbbbbbbb' });
  });
  afterAll(() => multi.close());

  it('accepts each key of the comma-separated list', async () => {
    await request(multi.app).get('/v1/data/meta/').set('x-api-key', 'first-key-aaaaaaaaaaaa').expect(200);
    await request(multi.app).get('/v1/data/meta/').set('x-api-key', 'second-key-bbbbbbbbbbb').expect(200);
    await request(multi.app).get('/v1/data/meta/').set('x-api-key', API_KEY).expect(401);
  });
});
