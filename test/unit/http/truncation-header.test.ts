import express from 'express';
import request from 'supertest';
import { LoadAnswer } from '../../../src/cube/answer';
import { sendLoadAnswer } from '../../../src/http/truncation-header';

/** Answers as the load routes make them: one object per answer, sent again as it is while cached. */
const ANSWERS = {
  count: { data: [{ 'Downloads.count': '928151' }], lastRefreshTime: '2026-11-26T12:00:00.000Z', annotation: {} },
  unicode: { data: [{ 'Shows.title': 'Émissions « spéciales » 🎙️', n: 1.5 }], total: null },
  long: { data: Array.from({ length: 60 }, (_, i) => ({ 'Apps.name': `app ${i} ${'x'.repeat(i)}` })) },
};

const SENT = Object.fromEntries(Object.entries(ANSWERS).map(([name, body]) => [name, new LoadAnswer(body, false)])) as Record<keyof typeof ANSWERS, LoadAnswer>;

function appWith(setting: (app: express.Express) => void) {
  const app = express();
  setting(app);
  app.get('/ours/:name', async (req, res) => {
    await sendLoadAnswer(res, SENT[req.params.name as keyof typeof ANSWERS]);
  });
  // The oracle: Express's own JSON answer.
  app.get('/express/:name', (req, res) => {
    res.json(ANSWERS[req.params.name as keyof typeof ANSWERS]);
  });
  return app;
}

async function seen(app: express.Express, method: 'get' | 'head', path: string, etag?: string) {
  const req = request(app)[method](path);
  if (etag !== undefined) req.set('If-None-Match', etag);
  const res = await req;
  return {
    status: res.status,
    body: res.text,
    type: res.headers['content-type'],
    length: res.headers['content-length'],
    etag: res.headers.etag,
  };
}

describe('sendLoadAnswer, a one-piece answer', () => {
  it.each([
    ['the default weak ETag', () => {}],
    ['strong ETags', (app: express.Express) => app.set('etag', 'strong')],
    ['no ETags', (app: express.Express) => app.set('etag', false)],
  ])('answers as res.json does, with %s, again and again, to GET, HEAD and conditional requests', async (_name, setting) => {
    const app = appWith(setting);
    for (const name of Object.keys(ANSWERS)) {
      for (let round = 0; round < 2; round += 1) {
        const mine = await seen(app, 'get', `/ours/${name}`);
        const theirs = await seen(app, 'get', `/express/${name}`);
        expect(mine).toEqual(theirs);
        expect(await seen(app, 'head', `/ours/${name}`)).toEqual(await seen(app, 'head', `/express/${name}`));
        expect(await seen(app, 'get', `/ours/${name}`, theirs.etag ?? '"none"')).toEqual(await seen(app, 'get', `/express/${name}`, theirs.etag ?? '"none"'));
      }
    }
  });

  it('hashes an answer sent again only once', async () => {
    const tagged: string[] = [];
    const app = appWith((a) =>
      a.set('etag', (body: Buffer | string) => {
        tagged.push(String(body));
        return `"${Buffer.byteLength(body)}"`;
      }),
    );
    for (let i = 0; i < 5; i += 1) expect((await seen(app, 'get', '/ours/count')).etag).toBe(`"${JSON.stringify(ANSWERS.count).length}"`);
    expect(tagged).toEqual([JSON.stringify(ANSWERS.count)]);
  });
});
