import type { ClickHouseClient } from '@clickhouse/client';
import type { Places } from '../derive/downloads';
import { GEO_DICTIONARIES, geoLoaded } from './load';
import { sqlLiteral } from '../sql';

/**
 * ClickHouse expressions for the places of an IP, in the form the cubes
 * serve: `country` is the English name (Downloads.country, "United
 * States"), `countryCode` the lower-case ISO code (as ChannelRanks and the
 * Links cubes keep it), `continent` the continent's name, `timezone` an
 * IANA zone, `org` the organisation of the IP's autonomous system. An IP no
 * database knows (private, documentation, unrouted) gets '' for every one:
 * empty, never a guess.
 *
 * `ip` is an expression of the given type: IPv4 or IPv6 columns are looked
 * up as they are; a String is parsed first (a string that is no address also
 * gets ''), which made a lookup 60 % slower at scale 1. The city lookup is
 * written once and shared by country, code, continent, city and time zone:
 * ClickHouse computes an identical subexpression once per row.
 */
export interface PlaceExpressions {
  country: string;
  countryCode: string;
  city: string;
  continent: string;
  timezone: string;
  org: string;
}

export function placeExpressions(database: string, ip: string, type: 'IPv4' | 'IPv6' | 'String'): PlaceExpressions {
  const dictionary = (name: string) => sqlLiteral(`${database}.${name}`);
  // IP_TRIE looks an IPv4 key up as its ::ffff: mapping, where the IPv4 networks are.
  const key = type === 'String' ? `tuple(toIPv6OrDefault(${ip}))` : `tuple(${ip})`;
  const record = `dictGet(${dictionary(GEO_DICTIONARIES.city)}, 'record', ${key})`;
  const place = (attribute: string) => `dictGet(${dictionary(GEO_DICTIONARIES.cityRecords)}, '${attribute}', ${record})`;
  const code = place('country_code');
  const country = (attribute: string) => countryAttribute(database, attribute, code);
  return {
    country: country('Name'),
    countryCode: `lower(${code})`,
    city: place('city'),
    continent: country('Continent'),
    timezone: place('timezone'),
    org: `dictGet(${dictionary(GEO_DICTIONARIES.asn)}, 'org', ${key})`,
  };
}

/** An attribute of a country by its ISO code (SQL): `Name` (English), `Continent`; '' for a code it does not know. */
function countryAttribute(database: string, attribute: string, code: string): string {
  return `dictGetOrDefault(${sqlLiteral(`${database}.${GEO_DICTIONARIES.country}`)}, '${attribute}', tuple(${code}), '')`;
}

/**
 * The derivation's places (derive/downloads.ts) from the IP database: every
 * place of a download, and the city and country of an imported request,
 * looked up from the row's address (`ip`, IPv6, which holds IPv4 as
 * ::ffff:a.b.c.d).
 */
export function addressPlaces(database: string): Places {
  const { city, country, continent, timezone, org, countryCode } = placeExpressions(database, 'ip', 'IPv6');
  return { constants: {}, city, country, continent, timezone, org, countryCode, countryName: (code) => countryAttribute(database, 'Name', code) };
}

/**
 * The places a running service's imports give rows: the IP database's when
 * one is loaded in `database`, else none: rows get empty places, and `warn`
 * says so and what to run. `npm start` loads the database before it serves
 * (src/index.ts), so this finds none only in a service started otherwise
 * (the tests' own) or a warehouse whose load failed; loading one here would
 * hold chDB's only statement lane for seconds.
 */
export async function placesFromDatabase(
  client: ClickHouseClient,
  database: string,
  warn: (message: string, fields: Record<string, unknown>) => void,
): Promise<Places | undefined> {
  if (await geoLoaded(client, database)) return addressPlaces(database);
  warn(
    'no IP database is loaded: the rows get empty places (country, city, continent, time zone, org); stop the service, then run `npm run warehouse -- geo-refresh` to load it and give every row its places',
    { database },
  );
  return undefined;
}
