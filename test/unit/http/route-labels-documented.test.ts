import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LABELLED_ROUTES } from '../../../src/http/route-label';

/**
 * docs/reference/metrics.md lists every value the request metrics' `route` label
 * takes: the routes src/http/route-label.ts lists, and "unmatched" for any other path.
 */
it('docs/reference/metrics.md lists every route label value, and no other', () => {
  const doc = readFileSync(path.resolve(__dirname, '..', '..', '..', 'docs', 'reference', 'metrics.md'), 'utf8');
  const row = doc.split('\n').find((line) => line.startsWith('| `analytics_http_request_duration_seconds` |'));
  expect(row).toBeDefined();
  const [, labels] = /`route` \(([^)]*)\)/.exec(row!) ?? [];
  const documented = [...(labels ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  expect(documented.sort()).toEqual([...LABELLED_ROUTES, 'unmatched'].sort());
});
