/**
 * A minimal MMDB writer (MaxMind DB format 2.0: a binary search tree over address bits, a data
 * section, a metadata map) for geo tests: a few IPv4 networks, each with its own record, so the
 * tests never read or ship a real geolocation database.
 */
type Value = string | number | boolean | Value[] | { [key: string]: Value };

function control(type: number, size: number): Buffer {
  const head: number[] = [];
  let sizeBits: number;
  const extra: number[] = [];
  if (size < 29) sizeBits = size;
  else if (size < 29 + 256) {
    sizeBits = 29;
    extra.push(size - 29);
  } else if (size < 285 + 65_536) {
    sizeBits = 30;
    const s = size - 285;
    extra.push(s >> 8, s & 0xff);
  } else throw new Error('value too large for this writer');
  if (type <= 7) head.push((type << 5) | sizeBits);
  else head.push(sizeBits, type - 7);
  return Buffer.from([...head, ...extra]);
}

function uintBytes(n: number | bigint): Buffer {
  const bytes: number[] = [];
  let v = BigInt(n);
  while (v > 0n) {
    bytes.unshift(Number(v & 0xffn));
    v >>= 8n;
  }
  return Buffer.from(bytes);
}

function encode(value: Value, uintType?: 5 | 6 | 9): Buffer {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([control(2, bytes.length), bytes]);
  }
  if (typeof value === 'number') {
    const type = uintType ?? 6;
    const bytes = uintBytes(value);
    return Buffer.concat([control(type, bytes.length), bytes]);
  }
  if (typeof value === 'boolean') return control(14, value ? 1 : 0);
  if (Array.isArray(value)) return Buffer.concat([control(11, value.length), ...value.map((v) => encode(v))]);
  const entries = Object.entries(value);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, v]) => [encode(k), encode(v, UINT_TYPES[k])])]);
}

/** Metadata fields the reader decodes as fixed integer types. */
const UINT_TYPES: Record<string, 5 | 6 | 9> = {
  node_count: 6,
  record_size: 5,
  ip_version: 5,
  binary_format_major_version: 5,
  binary_format_minor_version: 5,
  build_epoch: 9,
};

interface Node {
  left: Node | number | null;
  right: Node | number | null;
}

/** An IPv4 database with one record per network (`'81.2.69.0/24'`). */
export function buildMmdb(networks: Record<string, Record<string, Value>>): Buffer {
  const root: Node = { left: null, right: null };
  const data: Buffer[] = [];
  let dataSize = 0;
  for (const [cidr, record] of Object.entries(networks)) {
    const [addr, bitsText] = cidr.split('/');
    const bits = Number(bitsText ?? 32);
    const ip = addr!.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
    const offset = dataSize;
    const encoded = encode(record);
    data.push(encoded);
    dataSize += encoded.length;
    let node = root;
    for (let i = 0; i < bits; i++) {
      const bit = Math.floor(ip / 2 ** (31 - i)) % 2;
      const side = bit ? 'right' : 'left';
      if (i === bits - 1) node[side] = offset;
      else {
        if (typeof node[side] !== 'object' || node[side] === null) node[side] = { left: null, right: null };
        node = node[side] as Node;
      }
    }
  }
  const nodes: Node[] = [];
  const number = new Map<Node, number>();
  const walk = (n: Node) => {
    number.set(n, nodes.length);
    nodes.push(n);
    for (const child of [n.left, n.right]) if (child && typeof child === 'object') walk(child);
  };
  walk(root);
  const nodeCount = nodes.length;
  const recordOf = (r: Node | number | null) => (r === null ? nodeCount : typeof r === 'number' ? nodeCount + 16 + r : number.get(r)!);
  const tree = Buffer.alloc(nodeCount * 6);
  nodes.forEach((n, i) => {
    tree.writeUIntBE(recordOf(n.left), i * 6, 3);
    tree.writeUIntBE(recordOf(n.right), i * 6 + 3, 3);
  });
  const metadata = encode({
    node_count: nodeCount,
    record_size: 24,
    ip_version: 4,
    database_type: 'Cairn-Test-City',
    languages: ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: 1_700_000_000,
    description: { en: 'Test data made by the test suite' },
  });
  return Buffer.concat([tree, Buffer.alloc(16), ...data, Buffer.from([0xab, 0xcd, 0xef]), Buffer.from('MaxMind.com'), metadata]);
}
