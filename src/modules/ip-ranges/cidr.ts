/**
 * IP addresses and CIDR ranges as 128-bit numbers. IPv4 addresses are mapped into IPv6
 * (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2), so that one ordered key covers both families: an IPv4
 * range blocks the same client whether its socket reports `1.2.3.4` or `::ffff:1.2.3.4`.
 *
 * Parsing is strict (src/net/ip-address.ts: ipaddr.js behind a check of the text): dotted quads of four
 * decimal octets without leading zeros (`010.0.0.1` is refused rather than read as octal or decimal),
 * IPv6 in any RFC 4291 text form (with `::` and an embedded dotted quad), no zone ids in ranges, prefix
 * lengths 0..32 (IPv4) or 0..128 (IPv6). The keys stored in range_start / range_end are unchanged.
 */

import { cidrOf, parseIp, type ParsedIp } from '../../net/ip-address.ts';

const ALL_ONES = (1n << 128n) - 1n;

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

/** The 128-bit value of a parsed address (IPv4 as IPv4-mapped IPv6). */
function valueOf(ip: ParsedIp): bigint {
  const bytes = ip.kind() === 'ipv4' ? [...Array<number>(10).fill(0), 0xff, 0xff, ...ip.toByteArray()] : ip.toByteArray();
  return bytes.reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);
}

/** A dotted quad as a 32-bit number, or null. */
export function parseIPv4(text: string): bigint | null {
  const ip = parseIp(text);
  return ip?.kind() === 'ipv4' ? valueOf(ip) & 0xffffffffn : null;
}

/** An IPv6 address (any RFC 4291 text form, no zone id) as a 128-bit number, or null. */
export function parseIPv6(text: string): bigint | null {
  const ip = parseIp(text);
  return ip?.kind() === 'ipv6' ? valueOf(ip) : null;
}

/** An IPv4 or IPv6 address; IPv4 is returned IPv4-mapped. Null when it is not an address. */
export function parseAddress(text: string): IpAddress | null {
  const ip = parseIp(text);
  if (!ip) return null;
  return { version: ip.kind() === 'ipv4' ? 4 : 6, value: valueOf(ip) };
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
  const [base, bitsInFamily] = cidrOf(addressText, prefix);
  const bits = address.version === 4 ? 96 + bitsInFamily : bitsInFamily;
  const hostMask = bits === 128 ? 0n : ALL_ONES >> BigInt(bits);
  const start = valueOf(base) & (ALL_ONES ^ hostMask);
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
