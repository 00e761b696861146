import type { ClickHouseClient } from '@clickhouse/client';
import { quoteIdentifier } from '../sql';
import { GEO_TABLES } from './load';
import { placeExpressions } from './places';

/**
 * An IPv4 network of the loaded database, for generated data that should
 * get its places from the same dictionary as imported data: any address in
 * [first, first + size) resolves to the city, country and org given here.
 */
export interface SampleNetwork {
  /** First address as a number (toUInt32 of the IPv4). */
  first: number;
  size: number;
  country: string;
  countryCode: string;
  city: string;
  timezone: string;
  org: string;
}

/**
 * Up to `count` IPv4 networks the database places in the given country
 * (ISO code, either case), each with a city and an organisation, at most one
 * per city and org, chosen by `seed` (the same seed and database give the
 * same networks). Networks of /8 to /24, so a generator can draw many
 * addresses from one.
 */
export async function addressesForCountry(
  client: ClickHouseClient,
  database: string,
  countryCode: string,
  count: number,
  seed: number,
): Promise<SampleNetwork[]> {
  const db = quoteIdentifier(database);
  const places = placeExpressions(database, 'toIPv4(first)', 'IPv4');
  const result = await client.query({
    query: `
SELECT first, size, ${places.country} AS country, ${places.countryCode} AS countryCode, ${places.city} AS city, ${places.timezone} AS timezone, ${places.org} AS org
FROM (
  SELECT toUInt32(toUInt128(toIPv6(splitByChar('/', n.prefix)[1])) - 0xffff00000000) AS first,
         toUInt32(bitShiftLeft(toUInt64(1), 128 - toUInt8(splitByChar('/', n.prefix)[2]))) AS size
  FROM ${db}.${GEO_TABLES.city} AS n
  INNER JOIN ${db}.${GEO_TABLES.cityRecords} AS r ON n.record = r.record
  WHERE n.leaf AND startsWith(n.prefix, '::ffff:') AND toUInt8(splitByChar('/', n.prefix)[2]) BETWEEN 104 AND 120
    AND r.country_code = upper({code:String}) AND r.city != ''
)
WHERE org != ''
ORDER BY cityHash64({seed:Int64}, first)
LIMIT 1 BY city, org
LIMIT {count:UInt32}`,
    query_params: { code: countryCode, seed, count },
    format: 'JSONEachRow',
  });
  return (await result.json<SampleNetwork & { first: number | string; size: number | string }>()).map((row) => ({
    ...row,
    first: Number(row.first),
    size: Number(row.size),
  }));
}
