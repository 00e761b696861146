import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tinyMmdb } from './tiny-mmdb';

/** The place of 128.232.0.0/16 in the tiny city files, and of 2001:630::/32. */
export const TINY_CITY = { country_code: 'FR', city: 'Testville', timezone: 'Europe/Paris' };
export const TINY_CITY6 = { country_code: 'JP', city: 'Testfurt', timezone: 'Asia/Tokyo' };
const JANET = 0x2001_0630n << 96n;
const v4 = (a: number, b: number) => BigInt(a * 2 ** 24 + b * 2 ** 16);

/**
 * An IP database of a few networks in GEO_DB_DIR's layout, written into `dir`: it loads in a second where the real one
 * takes tens, for tests of what a load does rather than of the places it gives. Its places: TINY_CITY, TINY_CITY6;
 * its organisations: 8.8.8.0/24 "Tiny Org", 128.232.0.0/16 "Tiny Net, Ltd.", 2001:630::/32 "Tiny Six".
 */
export function writeTinyGeo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'tiny-city-ipv4.mmdb'), tinyMmdb(4, [{ address: v4(128, 232), prefix: 16, record: TINY_CITY }]));
  writeFileSync(path.join(dir, 'tiny-city-ipv6.mmdb'), tinyMmdb(6, [{ address: JANET, prefix: 32, record: TINY_CITY6 }]));
  // 8.8.8.0/24 and 128.232.0.0/16 as numbers, and 2001:630::/32.
  writeFileSync(path.join(dir, 'asn-ipv4-num.csv'), `134744064,134744319,64512,Tiny Org\n2162688000,2162753535,64513,"Tiny Net, Ltd."\n`);
  writeFileSync(path.join(dir, 'asn-ipv6-num.csv'), `${JANET},${JANET + (1n << 96n) - 1n},64514,Tiny Six\n`);
  return dir;
}
