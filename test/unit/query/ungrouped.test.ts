import { QueryRefusal } from '../../../src/query/rules';
import { checkUngrouped } from '../../../src/query/ungrouped';

const KEYED = new Set(['PodcastEvents', 'WebEvents']);

const refusal = (query: Record<string, unknown>): string | undefined => {
  try {
    checkUngrouped(query, KEYED);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(QueryRefusal);
    expect((err as QueryRefusal).code).toBe('invalid_query');
    return (err as Error).message;
  }
};

describe('checkUngrouped', () => {
  it('admits grouped queries on any cube, and ungrouped ones on cubes with a key', () => {
    expect(refusal({ dimensions: ['Downloads.country'] })).toBeUndefined();
    expect(refusal({ dimensions: ['Downloads.country'], ungrouped: false })).toBeUndefined();
    expect(refusal({ dimensions: ['PodcastEvents.city'], measures: ['PodcastEvents.count'], ungrouped: true })).toBeUndefined();
  });

  it('finds a keyless cube wherever the query names it', () => {
    const places: Record<string, unknown>[] = [
      { measures: ['Downloads.count'] },
      { dimensions: ['Downloads.country'] },
      { segments: ['Downloads.some'] },
      { timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day' }] },
      { filters: [{ member: 'Downloads.country', operator: 'set' }] },
      { filters: [{ or: [{ and: [{ dimension: 'Downloads.country', operator: 'set' }] }] }] },
    ];
    for (const place of places) {
      const message = refusal({ dimensions: ['WebEvents.appId'], ...place, ungrouped: true });
      expect(message).toContain('Downloads has none');
      expect(message).toContain('cubes that list records: PodcastEvents, WebEvents.');
    }
  });

  it('names every keyless cube once', () => {
    const message = refusal({ dimensions: ['Downloads.country', 'EpisodeRanks.platform', 'Downloads.city'], ungrouped: true });
    expect(message).toContain('Downloads, EpisodeRanks have none');
  });
});
