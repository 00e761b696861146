import express from 'express';
import request from 'supertest';
import { LABELLED_ROUTES, routeLabeller } from '../../../src/http/route-label';

/** The oracle: Express mounting a middleware on each pattern, as the app labelled its routes before. */
function mountedApp() {
  const app = express();
  for (const route of LABELLED_ROUTES) {
    app.use(route, (_req, res, next) => {
      res.locals.route = route;
      next();
    });
  }
  app.use((_req, res) => {
    res.send(String(res.locals.route ?? 'unmatched'));
  });
  return app;
}

function labelledApp() {
  const routeOf = routeLabeller(LABELLED_ROUTES);
  const app = express();
  app.use((req, res) => {
    res.send(routeOf(req.path) ?? 'unmatched');
  });
  return app;
}

/** A fixed-seed generator (mulberry32), so a failure names a path that fails again. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pathsToTry(): string[] {
  const next = random(21);
  const paths = new Set<string>(['/', '/v1', '/v1/', '/v1/data', '/cubejs-api', '/cubejs-api/v1', '/healthzz', '/v1/openapi.jsonx', '/v1/openapi_json']);
  for (const route of LABELLED_ROUTES) {
    const mixed = [...route].map((c) => (next() < 0.5 ? c.toUpperCase() : c)).join('');
    for (const base of [route, route.toUpperCase(), mixed]) {
      for (const tail of ['', '/', '//', '/x', '/x/y', 'x', '-', '.json', '%2F', '%2fx', '?q=1', '/?q=/v1/data/load', '#frag']) paths.add(base + tail);
    }
    paths.add(route.slice(0, -1));
    paths.add(`/${route}`);
    paths.add(`/x${route}`);
    // A letter percent-encoded: Express matches the path as sent, so this is another path.
    paths.add(route.replace(/[a-z](?=[^/]*$)/, (c) => `%${c.charCodeAt(0).toString(16)}`));
  }
  return [...paths];
}

describe('routeLabeller', () => {
  it('labels every path as mounting a middleware on each route pattern does', async () => {
    const theirs = mountedApp();
    const ours = labelledApp();
    const labels = new Set<string>();
    for (const path of pathsToTry()) {
      for (const method of ['get', 'post'] as const) {
        const expected = (await request(theirs)[method](path)).text;
        expect({ path, method, label: (await request(ours)[method](path)).text }).toEqual({ path, method, label: expected });
        labels.add(expected);
      }
    }
    // Every route and unmatched paths were among the answers compared.
    expect([...labels].sort()).toEqual([...LABELLED_ROUTES, 'unmatched'].sort());
  });

  it('folds only ASCII letters, as the router does: a non-ASCII letter whose lower case is ASCII is no match', () => {
    const routeOf = routeLabeller(['/v1/data/link']);
    expect(routeOf('/V1/DATA/LINK')).toBe('/v1/data/link');
    // U+212A KELVIN SIGN lower-cases to "k".
    expect('\u212a'.toLowerCase()).toBe('k');
    expect(routeOf('/v1/data/lin\u212a')).toBeUndefined();
  });
});
