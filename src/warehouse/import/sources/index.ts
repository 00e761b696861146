import { ImportRefused, type Source } from '../source';
import { CHARTS } from './charts';
import { LINK_EVENTS } from './link-events';
import { REQUESTS } from './requests';
import { WEB_EVENTS } from './web-events';

/** Every source `npm run warehouse -- import --source` takes, the default first. */
export const SOURCES: readonly Source[] = [REQUESTS, WEB_EVENTS, LINK_EVENTS, CHARTS];

/** The source of that name (`--source`); absent: the default, requests. */
export function sourceNamed(name: string = SOURCES[0].name): Source {
  const source = SOURCES.find((s) => s.name === name);
  if (source === undefined) throw new ImportRefused(`no source ${name}: the sources are ${SOURCES.map((s) => s.name).join(', ')}`);
  return source;
}
