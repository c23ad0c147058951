import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * IP addresses for the whole service: one strict parser (used by the SSRF check below and by the
 * blacklisted IP ranges of src/modules/ip-ranges), and the classification of addresses for outgoing
 * requests made on a user's behalf (SSRF protection).
 *
 * Parsing and the special-purpose ranges come from ipaddr.js. Its parser is lenient on its own (octal,
 * hexadecimal and short IPv4 forms, `::a.b.c.d` read as IPv4-mapped), so the text is first checked
 * with node:net (dotted quads of decimal octets without leading zeros, RFC 4291 IPv6 text).
 */

export type ParsedIp = ipaddr.IPv4 | ipaddr.IPv6;

/** `…:a.b.c.d` → `…:xxxx:yyyy`: ipaddr.js then reads every IPv6 form the same way (RFC 4291). */
function hexTail(text: string): string {
  if (!text.includes(':')) return text; // IPv4
  return text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) => {
    const hi = (Number(a) << 8) | Number(b);
    const lo = (Number(c) << 8) | Number(d);
    return `${hi.toString(16)}:${lo.toString(16)}`;
  });
}

/**
 * An IPv4 address (dotted quad only) or an IPv6 address in any RFC 4291 text form, or null. A zone id
 * (`fe80::1%eth0`) is refused unless `zone` is set, then ignored. No brackets, no surrounding spaces.
 */
export function parseIp(text: string, { zone = false }: { zone?: boolean } = {}): ParsedIp | null {
  let address = text;
  const percent = address.indexOf('%');
  if (percent !== -1) {
    if (!zone) return null;
    address = address.slice(0, percent);
  }
  switch (isIP(address)) {
    case 4:
      return ipaddr.IPv4.parse(address);
    case 6:
      return ipaddr.IPv6.parse(hexTail(address));
    default:
      return null;
  }
}

/** The ipaddr.js form of a CIDR given as an address already checked by `parseIp`, and a prefix. */
export function cidrOf(address: string, prefix: number): [ParsedIp, number] {
  return ipaddr.parseCIDR(`${hexTail(address)}/${prefix}`);
}

/**
 * Why an address is refused as a destination; `public` (plain global unicast) is the only class that
 * is fetched unless its host is explicitly allowed.
 */
export type AddressClass =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'multicast'
  | 'shared'
  /** IPv6 that reaches another address through a translator or tunnel: IPv4-mapped, NAT64, 6to4, Teredo. */
  | 'translated'
  | 'reserved'
  | 'invalid';

type Refused = Exclude<AddressClass, 'public' | 'invalid'>;

/** ipaddr.js range names (2.5.0) → our classes. Any name not listed here is `reserved`. */
const V4_CLASSES: Record<string, Refused> = {
  unspecified: 'reserved', // 0.0.0.0/8 "this network"; 0.0.0.0 itself is `unspecified` (below)
  broadcast: 'reserved',
  multicast: 'multicast',
  linkLocal: 'link_local', // includes cloud metadata 169.254.169.254
  loopback: 'loopback',
  carrierGradeNat: 'shared',
  private: 'private',
};
const V6_CLASSES: Record<string, Refused> = {
  unspecified: 'unspecified',
  loopback: 'loopback',
  linkLocal: 'link_local',
  multicast: 'multicast',
  uniqueLocal: 'private',
  deprecatedSiteLocal: 'private',
  ipv4Mapped: 'translated',
  rfc6145: 'translated',
  rfc6052: 'translated',
  '6to4': 'translated',
  teredo: 'translated',
};

const cidr = (text: string): [ParsedIp, number] => ipaddr.parseCIDR(text);

/**
 * Ranges refused whatever ipaddr.js calls them: the ones this service must never fetch from, pinned
 * here so that no change of a range name in the library can open them. (ipaddr.js 2.5.0 classifies all
 * of them as special except IPv4-compatible `::/96`, which it calls unicast.)
 */
const PINNED: Array<[ParsedIp, number, Refused]> = (
  [
    ['0.0.0.0/8', 'reserved'],
    ['100.64.0.0/10', 'shared'],
    ['192.0.0.0/24', 'reserved'],
    ['192.0.2.0/24', 'reserved'], // documentation (TEST-NET-1, -2, -3)
    ['198.51.100.0/24', 'reserved'],
    ['203.0.113.0/24', 'reserved'],
    ['198.18.0.0/15', 'reserved'], // benchmarking
    ['240.0.0.0/4', 'reserved'],
    ['::/96', 'translated'], // IPv4-compatible (deprecated)
    ['::ffff:0:0/96', 'translated'], // IPv4-mapped
    ['64:ff9b::/96', 'translated'], // NAT64, well-known prefix
    ['64:ff9b:1::/48', 'translated'], // NAT64, local-use prefix
    ['2001::/32', 'translated'], // Teredo
    ['2001:2::/48', 'reserved'], // benchmarking
    ['2001:db8::/32', 'reserved'], // documentation
    ['2002::/16', 'translated'], // 6to4
  ] as const
).map(([text, kind]): [ParsedIp, number, Refused] => [...cidr(text), kind]);

/** IPv6 global unicast is allocated from 2000::/3 only: anything else is reserved by the IETF. */
const GLOBAL_UNICAST_V6 = cidr('2000::/3');

function pinned(ip: ParsedIp): Refused | null {
  for (const [base, bits, kind] of PINNED) if (base.kind() === ip.kind() && ip.match(base, bits)) return kind;
  return null;
}

function classifyV4(ip: ipaddr.IPv4): AddressClass {
  if (ip.octets.every((o) => o === 0)) return 'unspecified';
  const range: string = ip.range();
  if (range !== 'unicast') return V4_CLASSES[range] ?? 'reserved';
  return pinned(ip) ?? 'public';
}

/** The IPv4 address an IPv6 address carries in a known place, if any (mapped, compatible, NAT64, 6to4). */
function embeddedV4(ip: ipaddr.IPv6, range: string): ipaddr.IPv4 | null {
  const p = ip.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (range === 'ipv4Mapped' || range === 'rfc6145') return v4(p[6], p[7]);
  if (range === 'rfc6052' && p[2] === 0) return v4(p[6], p[7]); // 64:ff9b::/96
  if (range === '6to4') return v4(p[1], p[2]);
  if (range === 'unicast' && p.slice(0, 6).every((g) => g === 0)) return v4(p[6], p[7]); // ::a.b.c.d
  return null;
}

function classifyV6(ip: ipaddr.IPv6): AddressClass {
  const range: string = ip.range();
  // An address that carries an IPv4 address is refused in any case; when that address is itself
  // special (loopback, private…) the message says so, which is what the user needs to know.
  const inner = embeddedV4(ip, range);
  if (inner) {
    const kind = classifyV4(inner);
    return kind === 'public' ? 'translated' : kind;
  }
  if (range !== 'unicast') return V6_CLASSES[range] ?? 'reserved';
  if (!ip.match(GLOBAL_UNICAST_V6)) return 'reserved';
  return pinned(ip) ?? 'public';
}

/** The class of an IP address given as text (IPv4, IPv6, bracketed IPv6, with a zone); `invalid` when it is none. */
export function classifyAddress(address: string): AddressClass {
  const ip = parseIp(address.replace(/^\[|\]$/g, ''), { zone: true });
  if (!ip) return 'invalid';
  return ip instanceof ipaddr.IPv4 ? classifyV4(ip) : classifyV6(ip);
}

/** Whether an address is plain global unicast, the only kind fetched without an allow-list entry. */
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
    case 'translated':
      return 'an IPv6 transition address (IPv4-mapped, NAT64, 6to4 or Teredo)';
    case 'reserved':
      return 'a reserved or special-purpose address';
    case 'invalid':
      return 'an invalid address';
    default:
      return 'a public address';
  }
}
