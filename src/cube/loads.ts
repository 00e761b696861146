import type { Config } from '../config';
import { LoadAnswer } from './answer';
import type { ThroughCache } from './cache-front';
import { cubeLoadWithoutDescriptions } from './cube-api-shapes';
import type { Gateway } from './gateway';
import { toLoadResult, toMultiLoadResult } from './shapes';
import { dropExtraRows, queriesWithOneMoreRow, withOneMoreRow, withTruncatedField } from './truncation';
import type { CubeService } from './types';

/**
 * The loads of both APIs: the spec's shape, Cube's multi shape on /v1, and
 * Cube's own answer. Each goes through the result cache; Cube is asked for
 * one row more than the client, whose presence says the limit cut the
 * answer, and which is dropped (truncation.ts).
 */
export function createLoads(gateway: Gateway, throughCache: ThroughCache, limits: Config['query']): Pick<CubeService, 'load' | 'loadMulti' | 'cubeLoad'> {
  return {
    load: (query, scope) =>
      throughCache('v1', query, scope, async () => {
        const { body, truncated } = dropExtraRows(await gateway.load({ query: withOneMoreRow(query, limits) }, scope), limits);
        return new LoadAnswer(toLoadResult(body, query), truncated.some(Boolean));
      }),

    loadMulti: (query, scope) =>
      throughCache('v1 multi', query, scope, async () => {
        const { body, truncated } = dropExtraRows(await gateway.load({ query: queriesWithOneMoreRow(query, limits), queryType: 'multi' }, scope), limits);
        return new LoadAnswer(toMultiLoadResult(body, query), truncated.some(Boolean));
      }),

    cubeLoad: (query, multi, scope) =>
      throughCache(multi ? 'cubejs multi' : 'cubejs', query, scope, async () => {
        const sent = { query: queriesWithOneMoreRow(query, limits), ...(multi ? { queryType: 'multi' } : {}) };
        const { body, truncated } = dropExtraRows(await gateway.load(sent, scope), limits);
        return new LoadAnswer(withTruncatedField(cubeLoadWithoutDescriptions(body), truncated), truncated.some(Boolean));
      }),
  };
}
