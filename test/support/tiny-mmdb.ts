/**
 * A MaxMind DB file (format 2.0, 24-bit records) holding the networks given,
 * written from the specification (https://maxmind.github.io/MaxMind-DB/):
 * a load of files this small takes a second where the real city database's
 * takes tens. Values are strings only, as in ip-location-db's city records.
 */
export function tinyMmdb(ipVersion: 4 | 6, networks: { address: bigint; prefix: number; record: Record<string, string> }[]): Buffer {
  const bits = ipVersion === 4 ? 32 : 128;
  type Node = { children: [Node | number | undefined, Node | number | undefined]; id?: number };
  const root: Node = { children: [undefined, undefined] };
  const data: Buffer[] = [];
  let dataSize = 0;
  // A leaf holds its record's offset in the data section until the node count is known.
  for (const { address, prefix, record } of networks) {
    const encoded = encode(record);
    const offset = dataSize;
    data.push(encoded);
    dataSize += encoded.length;
    let node = root;
    for (let depth = 0; depth < prefix; depth++) {
      const bit = Number((address >> BigInt(bits - depth - 1)) & 1n);
      if (depth === prefix - 1) {
        node.children[bit] = offset;
      } else {
        const next = node.children[bit];
        if (typeof next === 'number') throw new Error('tinyMmdb: a network inside another');
        node = next ?? (node.children[bit] = { children: [undefined, undefined] });
      }
    }
  }
  const nodes: Node[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const node = queue.shift() as Node;
    node.id = nodes.push(node) - 1;
    for (const child of node.children) if (typeof child === 'object') queue.push(child);
  }
  const nodeCount = nodes.length;
  const tree = Buffer.alloc(nodeCount * 6);
  nodes.forEach((node, i) =>
    node.children.forEach((child, side) => {
      // No child: the count itself, "no data"; a record: past the count and the 16-byte separator.
      const value = child === undefined ? nodeCount : typeof child === 'number' ? nodeCount + 16 + child : (child.id as number);
      tree.writeUIntBE(value, i * 6 + side * 3, 3);
    }),
  );
  const metadata = Buffer.concat([
    Buffer.from([0xe0 | 6]),
    encodeString('node_count'),
    uint(6, nodeCount, 4),
    encodeString('record_size'),
    uint(5, 24, 2),
    encodeString('ip_version'),
    uint(5, ipVersion, 2),
    encodeString('binary_format_major_version'),
    uint(5, 2, 2),
    encodeString('binary_format_minor_version'),
    uint(5, 0, 2),
    encodeString('database_type'),
    encodeString('tiny-city'),
  ]);
  return Buffer.concat([tree, Buffer.alloc(16), ...data, Buffer.from('abcdef4d61784d696e642e636f6d', 'hex'), metadata]);
}

function encode(record: Record<string, string>): Buffer {
  const entries = Object.entries(record);
  if (entries.length >= 29) throw new Error('tinyMmdb: 28 fields at most');
  return Buffer.concat([Buffer.from([0xe0 | entries.length]), ...entries.flatMap(([k, v]) => [encodeString(k), encodeString(v)])]);
}

function encodeString(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length >= 29) throw new Error('tinyMmdb: strings of 28 bytes at most');
  return Buffer.concat([Buffer.from([0x40 | bytes.length]), bytes]);
}

function uint(type: 5 | 6, value: number, size: number): Buffer {
  const out = Buffer.alloc(1 + size);
  out[0] = (type << 5) | size;
  out.writeUIntBE(value, 1, size);
  return out;
}
