import express, { type RequestHandler } from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { securityHeaders } from '../../../src/http/security-headers';

function appWith(headers: RequestHandler) {
  const app = express();
  app.use(headers);
  app.get('/json', (_req, res) => {
    res.json({ a: 1 });
  });
  app.post('/text', (_req, res) => {
    res.status(201).send('made');
  });
  return app;
}

/** An answer's headers without those that change from one request to the next. */
async function headersOf(app: express.Express, method: 'get' | 'post', path: string) {
  const res = await request(app)[method](path).set('Origin', 'https://example.org');
  const { date: _date, ...rest } = res.headers as Record<string, string>;
  return { status: res.status, headers: rest };
}

describe('securityHeaders', () => {
  it("sets exactly helmet's headers, helmet's default and the options the service could give it", async () => {
    for (const options of [undefined, { contentSecurityPolicy: false }, { hsts: { maxAge: 5 } }]) {
      const ours = appWith(securityHeaders(helmet(options)));
      const theirs = appWith(helmet(options));
      for (const [method, path] of [
        ['get', '/json'],
        ['post', '/text'],
        ['get', '/nowhere'],
      ] as const) {
        const mine = await headersOf(ours, method, path);
        expect(mine.headers['x-content-type-options']).toBe('nosniff');
        expect(mine).toEqual(await headersOf(theirs, method, path));
      }
    }
  });

  it("runs helmet's middleware once, not once a request", async () => {
    const inner = helmet();
    const counted = jest.fn(inner) as unknown as typeof inner;
    const app = appWith(securityHeaders(counted));
    for (let i = 0; i < 5; i += 1) expect((await request(app).get('/json')).headers['x-content-type-options']).toBe('nosniff');
    expect(counted).toHaveBeenCalledTimes(1);
  });

  it('refuses a middleware that does not finish at once', () => {
    const later = ((_req: unknown, _res: unknown, next: () => void) => setImmediate(next)) as unknown as ReturnType<typeof helmet>;
    expect(() => securityHeaders(later)).toThrow(/did not finish/);
  });
});
