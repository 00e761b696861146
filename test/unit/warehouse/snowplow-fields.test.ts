import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SNOWPLOW_FIELDS } from '../../../src/warehouse/import/sources/web-events';

/** The shared conformance folder beside the repository (one level further up from a git worktree). */
const CONFORMANCE = [path.resolve(__dirname, '..', '..', '..', '..'), path.resolve(__dirname, '..', '..', '..', '..', '..')]
  .map((parent) => path.join(parent, 'shared', 'conformance', 'snowplow', 'enriched-fields.json'))
  .find((file) => existsSync(file));

it("the web-events source reads Snowplow's enriched event in the order its loaders write the 131 fields", () => {
  const { fields } = JSON.parse(readFileSync(CONFORMANCE as string, 'utf8')) as { fields: string[] };
  expect(fields).toHaveLength(131);
  expect(SNOWPLOW_FIELDS).toEqual(fields);
});
