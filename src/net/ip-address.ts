import { isIP } from 'node:net';

/**
 * Classification of IP addresses for outgoing requests made on a user's behalf (SSRF protection).
 * An address is `public` when it is routable on the Internet; everything else names this machine,
 * its networks, or nothing at all, and is refused unless its host is explicitly allowed.
 */
export type AddressClass = 'public' | 'unspecified' | 'loopback' | 'private' | 'link_local' | 'multicast' | 'shared' | 'reserved' | 'invalid';

interface Range {
  base: bigint;
  bits: number;
  kind: Exclude<AddressClass, 'public' | 'invalid'>;
}

/** IPv4 text → 32-bit value, or null. Only the dotted-quad form (URL parsing normalises the others). */
function parseV4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = (value << 8n) | BigInt(n);
  }
  return value;
}

/** IPv6 text (with an optional embedded IPv4 tail and zone) → 128-bit value, or null. */
function parseV6(input: string): bigint | null {
  let text = input.replace(/^\[|\]$/g, '');
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  if (isIP(text) !== 6) return null;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes its two hexadecimal groups.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4value = parseV4(tail);
    if (v4value === null) return null;
    text = `${text.slice(0, lastColon + 1)}${(v4value >> 16n).toString(16)}:${(v4value & 0xffffn).toString(16)}`;
  }
  const double = text.indexOf('::');
  const groupsOf = (s: string) => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));
  let groups: number[];
  if (double === -1) {
    groups = groupsOf(text);
  } else {
    const head = groupsOf(text.slice(0, double));
    const rest = groupsOf(text.slice(double + 2));
    if (head.length + rest.length > 7) return null;
    groups = [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
  }
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return null;
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

const v4 = (cidr: string, kind: Range['kind']): Range => {
  const [addr, bits] = cidr.split('/');
  return { base: parseV4(addr)!, bits: Number(bits), kind };
};
const v6 = (cidr: string, kind: Range['kind']): Range => {
  const [addr, bits] = cidr.split('/');
  return { base: parseV6(addr)!, bits: Number(bits), kind };
};

// Most specific first where ranges nest.
const V4_RANGES: Range[] = [
  v4('0.0.0.0/32', 'unspecified'),
  v4('0.0.0.0/8', 'reserved'), // "this network"
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'shared'), // carrier-grade NAT
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link_local'), // includes cloud metadata 169.254.169.254
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'reserved'), // IETF protocol assignments
  v4('192.0.2.0/24', 'reserved'), // TEST-NET-1
  v4('192.88.99.0/24', 'reserved'), // 6to4 relay anycast
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'reserved'), // benchmarking
  v4('198.51.100.0/24', 'reserved'), // TEST-NET-2
  v4('203.0.113.0/24', 'reserved'), // TEST-NET-3
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'), // includes broadcast 255.255.255.255
];

const V6_RANGES: Range[] = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('100::/64', 'reserved'), // discard-only
  v6('2001:db8::/32', 'reserved'), // documentation
  v6('fc00::/7', 'private'), // unique local
  v6('fe80::/10', 'link_local'),
  v6('fec0::/10', 'private'), // deprecated site-local
  v6('ff00::/8', 'multicast'),
];

function inRange(value: bigint, width: number, range: Range): boolean {
  const shift = BigInt(width - range.bits);
  return value >> shift === range.base >> shift;
}

function classifyV4(value: bigint): AddressClass {
  for (const r of V4_RANGES) if (inRange(value, 32, r)) return r.kind;
  return 'public';
}

function classifyV6(value: bigint): AddressClass {
  // Forms that carry an IPv4 address are judged by that address: IPv4-mapped (::ffff:a.b.c.d),
  // IPv4-compatible (::a.b.c.d, deprecated), IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96)
  // and 6to4 (2002:AABB:CCDD::/48).
  const low32 = value & 0xffffffffn;
  if (value >> 32n === 0xffffn) return classifyV4(low32);
  if (value >> 32n === 0xffff0000n) return classifyV4(low32);
  if (value >> 32n === 0n && value > 1n) return classifyV4(low32);
  if (value >> 32n === parseV6('64:ff9b::')! >> 32n) return classifyV4(low32);
  if (value >> 112n === 0x2002n) return classifyV4((value >> 80n) & 0xffffffffn);
  for (const r of V6_RANGES) if (inRange(value, 128, r)) return r.kind;
  return 'public';
}

/** The class of an IP address given as text (IPv4, IPv6, bracketed IPv6); `invalid` when it is none. */
export function classifyAddress(address: string): AddressClass {
  const text = address.replace(/^\[|\]$/g, '');
  const family = isIP(text.split('%')[0]);
  if (family === 4) return classifyV4(parseV4(text)!);
  if (family === 6) {
    const value = parseV6(text);
    return value === null ? 'invalid' : classifyV6(value);
  }
  return 'invalid';
}

export const isPublicAddress = (address: string) => classifyAddress(address) === 'public';

/** Human words for a refused class, for error messages. */
export function describeClass(kind: AddressClass): string {
  switch (kind) {
    case 'unspecified':
      return 'an unspecified address';
    case 'loopback':
      return 'a loopback address';
    case 'private':
      return 'a private network address';
    case 'link_local':
      return 'a link-local address';
    case 'multicast':
      return 'a multicast address';
    case 'shared':
      return 'a carrier-grade NAT address';
    case 'reserved':
      return 'a reserved address';
    case 'invalid':
      return 'an invalid address';
    default:
      return 'a public address';
  }
}

// Exported for tests.
export const _internal = { parseV4, parseV6 };
