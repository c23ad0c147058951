/**
 * IP addresses and CIDR ranges as 128-bit numbers. IPv4 addresses are mapped into IPv6
 * (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2), so that one ordered key covers both families: an IPv4
 * range blocks the same client whether its socket reports `1.2.3.4` or `::ffff:1.2.3.4`.
 *
 * Parsing is strict: dotted quads of four decimal octets without leading zeros (`010.0.0.1` is
 * refused rather than read as octal or decimal), IPv6 in any RFC 4291 text form (with `::` and an
 * embedded dotted quad), no zone ids in ranges, prefix lengths 0..32 (IPv4) or 0..128 (IPv6).
 */

const ALL_ONES = (1n << 128n) - 1n;
const V4_MAPPED = 0xffffn << 32n;

export type IpVersion = 4 | 6;

export interface IpAddress {
  version: IpVersion;
  /** The 128-bit value; IPv4 addresses are IPv4-mapped. */
  value: bigint;
}

export interface IpRange {
  version: IpVersion;
  /** Prefix length in the address's own family (0..32 for IPv4, 0..128 for IPv6). */
  prefix: number;
  /** First and last 128-bit addresses of the range (IPv4-mapped for IPv4). */
  start: bigint;
  end: bigint;
}

/** Why a range was refused, worded to follow the field name in a 422 detail. */
export class CidrError extends Error {}

/** A dotted quad as a 32-bit number, or null. */
export function parseIPv4(text: string): bigint | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return null;
  let value = 0n;
  for (const part of m.slice(1)) {
    if (part.length > 1 && part.startsWith('0')) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = (value << 8n) | BigInt(octet);
  }
  return value;
}

/** An IPv6 address (any RFC 4291 text form, no zone id) as a 128-bit number, or null. */
export function parseIPv6(text: string): bigint | null {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || text.length > 45) return null;
  let groups = text;
  let tail: bigint[] = [];
  // An embedded dotted quad takes the place of the last two groups.
  const lastColon = groups.lastIndexOf(':');
  if (lastColon === -1) return null;
  const last = groups.slice(lastColon + 1);
  if (last.includes('.')) {
    const v4 = parseIPv4(last);
    if (v4 === null) return null;
    tail = [v4 >> 16n, v4 & 0xffffn];
    // "a:b:1.2.3.4" → "a:b", but "::1.2.3.4" → "::" and "a::1.2.3.4" → "a::".
    groups = groups.slice(0, lastColon + 1);
    if (!groups.endsWith('::')) groups = groups.slice(0, -1);
  }
  if (groups.includes('.')) return null;
  const halves = groups.split('::');
  if (halves.length > 2) return null;
  const parseGroups = (s: string): bigint[] | null => {
    if (s === '') return [];
    const out: bigint[] = [];
    for (const g of s.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(BigInt(`0x${g}`));
    }
    return out;
  };
  const head = parseGroups(halves[0]);
  if (head === null) return null;
  let all: bigint[];
  if (halves.length === 2) {
    const rest = parseGroups(halves[1]);
    if (rest === null) return null;
    const given = head.length + rest.length + tail.length;
    // "::" stands for at least one group of zeros.
    if (given > 7) return null;
    all = [...head, ...Array<bigint>(8 - given).fill(0n), ...rest, ...tail];
  } else {
    all = [...head, ...tail];
    if (all.length !== 8) return null;
  }
  return all.reduce((acc, g) => (acc << 16n) | g, 0n);
}

/** An IPv4 or IPv6 address; IPv4 is returned IPv4-mapped. Null when it is not an address. */
export function parseAddress(text: string): IpAddress | null {
  const v4 = parseIPv4(text);
  if (v4 !== null) return { version: 4, value: V4_MAPPED | v4 };
  const v6 = parseIPv6(text);
  if (v6 !== null) return { version: 6, value: v6 };
  return null;
}

/**
 * A CIDR (`10.0.0.0/8`, `2001:db8::/32`) or a single address (a /32 or /128). Host bits are allowed
 * (`192.168.0.1/24` is the range 192.168.0.0–192.168.0.255). Throws CidrError saying what is wrong.
 */
export function parseCidr(input: string): IpRange {
  const text = input.trim();
  if (text === '') throw new CidrError('must not be empty');
  const slash = text.indexOf('/');
  const addressText = slash === -1 ? text : text.slice(0, slash);
  if (addressText.includes('%')) throw new CidrError('must not carry a zone id');
  const address = parseAddress(addressText);
  if (!address) throw new CidrError('must be an IPv4 or IPv6 address or CIDR range, e.g. 192.168.0.0/24 or 2001:db8::/32');
  const max = address.version === 4 ? 32 : 128;
  let prefix = max;
  if (slash !== -1) {
    const prefixText = text.slice(slash + 1);
    if (!/^(0|[1-9]\d{0,2})$/.test(prefixText)) throw new CidrError(`prefix length must be an integer between 0 and ${max}`);
    prefix = Number(prefixText);
    if (prefix > max) throw new CidrError(`prefix length must be between 0 and ${max} for IPv${address.version}`);
  }
  const bits = address.version === 4 ? 96 + prefix : prefix;
  const hostMask = bits === 128 ? 0n : ALL_ONES >> BigInt(bits);
  const start = address.value & (ALL_ONES ^ hostMask);
  return { version: address.version, prefix, start, end: start | hostMask };
}

/** The fixed-width key stored in range_start / range_end: 32 lower-case hex digits. */
export function toKey(value: bigint): string {
  return value.toString(16).padStart(32, '0');
}

/**
 * The key of an address as a client connection reports it: IPv4, IPv6 or IPv4-mapped IPv6, a zone
 * id (`fe80::1%eth0`) ignored. Null when it is not an address.
 */
export function addressKey(text: string): string | null {
  const trimmed = text.trim();
  const zone = trimmed.indexOf('%');
  const address = parseAddress(zone === -1 ? trimmed : trimmed.slice(0, zone));
  return address ? toKey(address.value) : null;
}

/** The text form of a 128-bit key: dotted quad for IPv4-mapped values, else full IPv6 groups. */
export function formatKey(value: bigint): string {
  if (value >> 32n === 0xffffn) {
    return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.');
  }
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((value >> BigInt(i * 16)) & 0xffffn).toString(16));
  return groups.join(':');
}
