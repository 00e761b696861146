import { readFileSync } from 'node:fs';
import path from 'node:path';
import { STATUS_BY_CODE } from '../../../src/http/errors';

/**
 * docs/reference/api.md's one table of errors, between its `error-codes` markers, names every code the envelope
 * answers with, with the status STATUS_BY_CODE gives it, and no other.
 */
it('docs/reference/api.md lists every error code with its status, and no other', () => {
  const doc = readFileSync(path.resolve(__dirname, '..', '..', '..', 'docs', 'reference', 'api.md'), 'utf8');
  const table = doc.slice(doc.indexOf('<!-- error-codes -->'), doc.indexOf('<!-- /error-codes -->'));
  const documented = Object.fromEntries([...table.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map(([, code, status]) => [code, Number(status)]));
  expect(documented).toEqual(STATUS_BY_CODE);
});
