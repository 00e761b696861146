import fc from 'fast-check';
import { Reader } from 'mmdb-lib';
import { mmdbNetworks, type MmdbCityRecord } from '../../../src/warehouse/geo/mmdb';
import { tinyMmdb } from '../../support/tiny-mmdb';

/**
 * The prefixes mmdbNetworks writes, looked up as IP_TRIE looks them up (the longest prefix holding the address),
 * against mmdb-lib's reader of the same file: every address gets the place the file gives it, or none where the file
 * has no network. Files are random trees of networks over a few places, so neighbours often share one.
 */

const PLACES: MmdbCityRecord[] = [
  { country_code: 'GB', city: 'Cambridge', timezone: 'Europe/London' },
  { country_code: 'GB', city: '', timezone: 'Europe/London' },
  { country_code: 'JP', city: 'Tokyo', timezone: 'Asia/Tokyo' },
];

interface Network {
  address: bigint;
  prefix: number;
  record: Record<string, string>;
}

/** A tree of networks under base/top (bits of the family), its shape drawn from `choices`: leaves hold a place or none. */
function networksFrom(choices: number[], base: bigint, top: number, bits: number, maxDepth: number): Network[] {
  const out: Network[] = [];
  let next = 0;
  const draw = () => choices[next++ % choices.length];
  const split = (address: bigint, prefix: number) => {
    const choice = draw();
    if (prefix < top + maxDepth && choice % 5 < 2) {
      split(address, prefix + 1);
      split(address | (1n << BigInt(bits - prefix - 1)), prefix + 1);
    } else if (choice % 4 !== 0) {
      // Each network its own record, as in the real files; several records hold the same place.
      out.push({ address, prefix, record: { ...PLACES[choice % PLACES.length], postcode: String(choice) } });
    }
  };
  split(base, top);
  return out;
}

async function prefixesOf(file: Buffer) {
  const { networkChunks, places } = await mmdbNetworks(file);
  const prefixes: { start: bigint; length: number; place: number; leaf: boolean }[] = [];
  for await (const chunk of networkChunks) {
    for (const line of chunk.trim().split('\n')) {
      const [start, length, place, leaf] = line.split('\t');
      prefixes.push({ start: BigInt(start), length: Number(length), place: Number(place), leaf: leaf === '1' });
    }
  }
  return { prefixes, places };
}

const IPV4_MAPPED = 0xffff_0000_0000n;
const inside = (address: bigint, { start, length }: { start: bigint; length: number }) => address >> BigInt(128 - length) === start >> BigInt(128 - length);

function lookUp(prefixes: { start: bigint; length: number; place: number }[], address: bigint): number {
  let best: { length: number; place: number } | undefined;
  for (const p of prefixes) if (inside(address, p) && (!best || p.length > best.length)) best = p;
  return best?.place ?? 0;
}

const ipv4Text = (n: bigint) => [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 255n)).join('.');
const ipv6Text = (n: bigint) => Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':');

/** Each network's first and last address and their outer neighbours, and the family's ends. */
function probes(networks: Network[], bits: number): bigint[] {
  const max = (1n << BigInt(bits)) - 1n;
  return [
    0n,
    max,
    ...networks.flatMap(({ address, prefix }) => {
      const last = address + (1n << BigInt(bits - prefix)) - 1n;
      return [address, last, address - 1n, last + 1n, (address + last) / 2n];
    }),
  ].filter((a) => a >= 0n && a <= max);
}

const placeOf = (found: unknown) => {
  const record = found as Partial<MmdbCityRecord> | null | undefined;
  return record ? `${record.country_code ?? ''}|${record.city ?? ''}|${record.timezone ?? ''}` : '';
};

describe('the IP_TRIE prefixes of an MMDB city file', () => {
  it('give every IPv4 address the place the file gives it, in no more prefixes than the file has networks and the IPv4 root', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(1000), { minLength: 1, maxLength: 200 }), async (choices) => {
        const networks = networksFrom(choices, 0x0a000000n, 8, 32, 8);
        fc.pre(networks.length > 0);
        const file = tinyMmdb(4, networks);
        const reader = new Reader(file);
        const { prefixes, places } = await prefixesOf(file);
        const name = (place: number) => (place === 0 ? '' : placeOf(places.get(place)));
        const numbers = probes(networks, 32);
        const addresses = numbers.map(ipv4Text);
        expect(addresses.map((a, i) => [a, name(lookUp(prefixes, IPV4_MAPPED | numbers[i]))])).toEqual(addresses.map((a) => [a, placeOf(reader.get(a))]));
        // The IPv4 space's root is always written, so no prefix of the IPv6 file answers for an IPv4 address.
        expect(prefixes.some((p) => p.start === IPV4_MAPPED && p.length === 96)).toBe(true);
        expect(prefixes.length).toBeLessThanOrEqual(networks.length + 1);
        // A leaf's addresses all have its place: no prefix lies inside it.
        for (const leaf of prefixes.filter((p) => p.leaf)) {
          expect(prefixes.some((p) => p !== leaf && p.length > leaf.length && inside(p.start, leaf))).toBe(false);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('give every IPv6 address the place the file gives it, and write nothing inside the IPv4 space', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(1000), { minLength: 1, maxLength: 200 }), async (choices) => {
        // Networks of 2001:db8::/32, and ::/16 around the IPv4 space (::ffff:0:0/96), which the IPv4 file answers.
        const networks = [...networksFrom(choices, 0x20010db8n << 96n, 32, 128, 8), { address: 0n, prefix: 16, record: { ...PLACES[2] } }];
        const file = tinyMmdb(6, networks);
        const reader = new Reader(file);
        const { prefixes, places } = await prefixesOf(file);
        const name = (place: number) => (place === 0 ? '' : placeOf(places.get(place)));
        const addresses = probes(networks, 128).filter((a) => a >> 32n !== 0xffffn);
        expect(addresses.map((a) => [ipv6Text(a), name(lookUp(prefixes, a))])).toEqual(addresses.map((a) => [ipv6Text(a), placeOf(reader.get(ipv6Text(a)))]));
        expect(prefixes.filter((p) => p.length >= 96 && p.start >> 32n === 0xffffn)).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });
});
