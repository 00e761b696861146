import { looksLikeKey } from '../../../src/keys/key';
import { createKey, readKeyFile, revokeKey } from '../../../src/keys/store';
import { load, meta } from '../support/api';
import { API_KEY } from '../support/constants';
import { defaultService } from '../support/default-service';
import { startService, type TestService } from '../support/service';

let service: TestService;
beforeAll(async () => {
  service = await defaultService();
});

const COUNT = { measures: ['Downloads.count'] };
const routes = [
  { route: 'GET /v1/data/meta', send: (key: string | null) => meta(service, { key }) },
  { route: 'POST /v1/data/load', send: (key: string | null) => load(service, COUNT, { key }) },
];

describe.each(routes)('$route', ({ send }) => {
  it('answers 401 with a JSON error when x-api-key is missing', async () => {
    const res = await send(null).expect(401).expect('content-type', /json/);
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
    await send(null).query({ 'x-api-key': API_KEY }).set('authorization', `Bearer ${API_KEY}`).expect(401);
  });
});

describe('several configured keys', () => {
  let multi: TestService;
  beforeAll(async () => {
    multi = await startService({ API_KEYS: 'first-key-aaaaaaaaaaaa, second-key-bbbbbbbbbbb' });
  });
  afterAll(() => multi.close());

  it('accepts each key of the comma-separated list', async () => {
    await meta(multi, { key: 'first-key-aaaaaaaaaaaa' }).expect(200);
    await meta(multi, { key: 'second-key-bbbbbbbbbbb' }).expect(200);
    await meta(multi, { key: API_KEY }).expect(401);
  });
});

describe('account keys from the key file', () => {
  const account = 'northwind-audio';
  const lines: string[] = [];
  let keyed: TestService;
  beforeAll(async () => {
    keyed = await startService({ API_KEYS_RELOAD_MS: '100' }, { accounts: [account], log: (line) => lines.push(line) });
  });
  afterAll(() => keyed.close());

  it('lets a stored key in and logs its id, never the key', async () => {
    const key = keyed.accountKeys[account];
    expect(looksLikeKey(key)).toBe(true);
    const res = await meta(keyed, { key }).expect(200);
    const [record] = await readKeyFile(keyed.config.keys.file);
    const line = lines.map((l) => JSON.parse(l)).find((l) => l.requestId === res.headers['x-request-id']);
    expect(line).toMatchObject({ msg: 'request', keyId: record.id, status: 200 });
    expect(lines.join('\n')).not.toContain(key);
  });

  it('answers a revoked key exactly as an unknown one, without a restart', async () => {
    const key = keyed.accountKeys[account];
    const [record] = await readKeyFile(keyed.config.keys.file);
    await revokeKey(keyed.config.keys.file, record.id);
    const deadline = Date.now() + 5000;
    let res = await meta(keyed, { key });
    while (res.status === 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      res = await meta(keyed, { key });
    }
    expect(res.status).toBe(401);
    const unknown = await meta(keyed, { key: `${key.slice(0, -1)}x` }).expect(401);
    expect({ ...res.body, requestId: undefined }).toEqual({ ...unknown.body, requestId: undefined });
  });

  it('answers 403 when the key lacks the route scope', async () => {
    const { key } = await createKey(keyed.config.keys.file, { account, name: 'meta only', scopes: ['data:meta'] });
    const deadline = Date.now() + 5000;
    while ((await meta(keyed, { key })).status !== 200 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const res = await load(keyed, COUNT, { key }).expect(403);
    expect(res.body).toMatchObject({ code: 'forbidden', error: expect.stringContaining('data:load') });
  });
});
