import net from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import ipaddr from 'ipaddr.js';
import { addressKey, CidrError, formatKey, parseAddress, parseCidr, parseIPv4, parseIPv6, toKey } from '../../src/modules/ip-ranges/cidr.ts';

/** [first, last] of a range as text. */
const ends = (cidr: string) => {
  const r = parseCidr(cidr);
  return [formatKey(r.start), formatKey(r.end)];
};

describe('IPv4', () => {
  it('parses dotted quads strictly', () => {
    expect(parseIPv4('0.0.0.0')).toBe(0n);
    expect(parseIPv4('255.255.255.255')).toBe(0xffffffffn);
    expect(parseIPv4('192.168.0.1')).toBe(0xc0a80001n);
    for (const bad of [
      '256.0.0.1',
      '1.2.3',
      '1.2.3.4.5',
      '01.2.3.4',
      '1.2.3.04',
      '1..2.3',
      ' 1.2.3.4',
      '1.2.3.4 ',
      'a.b.c.d',
      '1.2.3.-4',
      '1.2.3.4/8',
      '',
      '0x1.2.3.4',
      '1e2.0.0.1',
    ]) {
      expect(parseIPv4(bad), bad).toBeNull();
    }
  });

  it('maps IPv4 into IPv6 (::ffff:a.b.c.d)', () => {
    expect(toKey(parseAddress('1.2.3.4')!.value)).toBe('00000000000000000000ffff01020304');
    expect(parseAddress('1.2.3.4')!.version).toBe(4);
  });

  it('computes CIDR ranges, host bits allowed', () => {
    expect(ends('192.168.0.1/24')).toEqual(['192.168.0.0', '192.168.0.255']);
    expect(ends('10.0.0.0/8')).toEqual(['10.0.0.0', '10.255.255.255']);
    expect(ends('10.1.2.3/31')).toEqual(['10.1.2.2', '10.1.2.3']);
    expect(ends('203.0.113.7/32')).toEqual(['203.0.113.7', '203.0.113.7']);
    expect(ends('203.0.113.7')).toEqual(['203.0.113.7', '203.0.113.7']);
    expect(parseCidr('203.0.113.7').prefix).toBe(32);
  });

  it('/0 covers every IPv4 (and IPv4-mapped) address but no native IPv6 one', () => {
    const r = parseCidr('0.0.0.0/0');
    expect(r.prefix).toBe(0);
    expect(toKey(r.start)).toBe('00000000000000000000ffff00000000');
    expect(toKey(r.end)).toBe('00000000000000000000ffffffffffff');
    expect(toKey(parseAddress('2001:db8::1')!.value) > toKey(r.end)).toBe(true);
    expect(toKey(parseAddress('::1')!.value) < toKey(r.start)).toBe(true);
  });

  it('refuses prefixes outside 0..32 and malformed ones', () => {
    for (const bad of ['10.0.0.0/33', '10.0.0.0/-1', '10.0.0.0/', '10.0.0.0/08', '10.0.0.0/1.5', '10.0.0.0/8/8', '10.0.0.0/ 8', '10.0.0.0/1000']) {
      expect(() => parseCidr(bad), bad).toThrow(CidrError);
    }
    expect(() => parseCidr('10.0.0.0/33')).toThrow(/between 0 and 32/);
  });
});

describe('IPv6', () => {
  it('parses every RFC 4291 text form', () => {
    expect(parseIPv6('::')).toBe(0n);
    expect(parseIPv6('::1')).toBe(1n);
    expect(parseIPv6('1::')).toBe(1n << 112n);
    expect(parseIPv6('2001:db8::ff00:42:8329')).toBe(parseIPv6('2001:0db8:0000:0000:0000:ff00:0042:8329'));
    expect(parseIPv6('2001:DB8::1')).toBe(parseIPv6('2001:db8::1'));
    expect(parseIPv6('1:2:3:4:5:6:7::')).toBe(parseIPv6('1:2:3:4:5:6:7:0'));
    expect(parseIPv6('::2:3:4:5:6:7:8')).toBe(parseIPv6('0:2:3:4:5:6:7:8'));
    expect(parseIPv6('::ffff:1.2.3.4')).toBe(0xffff01020304n);
    expect(parseIPv6('::1.2.3.4')).toBe(0x01020304n);
    expect(parseIPv6('64:ff9b::192.0.2.33')).toBe(parseIPv6('64:ff9b::c000:221'));
    expect(parseIPv6('1:2:3:4:5:6:1.2.3.4')).toBe(parseIPv6('1:2:3:4:5:6:102:304'));
  });

  it('refuses malformed IPv6', () => {
    for (const bad of [
      ':',
      ':::',
      '1:::2',
      '1::2::3',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7',
      '1:2:3:4:5:6:7:8::',
      '12345::',
      'g::1',
      ':1::2',
      '1::2:',
      '::ffff:1.2.3',
      '::ffff:256.1.1.1',
      '1.2.3.4::',
      '::1.2.3.4:5',
      '1:2:3:4:5:6:7:1.2.3.4',
      'fe80::1%eth0',
      '[::1]',
      '::ffff:01.2.3.4',
    ]) {
      expect(parseIPv6(bad), bad).toBeNull();
    }
  });

  it('agrees with node:net on what is an address', () => {
    const samples = [
      '::',
      '::1',
      '1::',
      '::ffff:1.2.3.4',
      '2001:db8::1',
      '1:2:3:4:5:6:7:8',
      '1:2:3:4:5:6:7::',
      '::2:3:4:5:6:7:8',
      '1::2::3',
      ':::',
      '1:2:3:4:5:6:7',
      '12345::',
      '::1.2.3',
      'a:b:c:d:e:f:1.2.3.4',
      'a:b:c:d:e:1.2.3.4',
    ];
    for (const s of samples) expect(parseIPv6(s) !== null, s).toBe(net.isIPv6(s));
  });

  it('round-trips random addresses through the URL serializer (compressed form)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), (value) => {
        const full = Array.from({ length: 8 }, (_, i) => ((value >> BigInt((7 - i) * 16)) & 0xffffn).toString(16)).join(':');
        const compressed = new URL(`http://[${full}]/`).hostname.slice(1, -1);
        expect(parseIPv6(full)).toBe(value);
        expect(parseIPv6(compressed)).toBe(value);
      }),
      { numRuns: 300 },
    );
  });

  it('computes ranges for /0, /64, /128 and IPv4-mapped prefixes', () => {
    const all = parseCidr('::/0');
    expect(toKey(all.start)).toBe('0'.repeat(32));
    expect(toKey(all.end)).toBe('f'.repeat(32));
    expect(ends('2001:db8:1:2:3:4:5:6/64')).toEqual(['2001:db8:1:2:0:0:0:0', '2001:db8:1:2:ffff:ffff:ffff:ffff']);
    expect(ends('2001:db8::1/128')).toEqual(['2001:db8:0:0:0:0:0:1', '2001:db8:0:0:0:0:0:1']);
    expect(parseCidr('2001:db8::1').prefix).toBe(128);
    // ::ffff:10.0.0.0/104 is the same range as 10.0.0.0/8.
    const mapped = parseCidr('::ffff:10.0.0.0/104');
    const v4 = parseCidr('10.0.0.0/8');
    expect([mapped.start, mapped.end]).toEqual([v4.start, v4.end]);
  });

  it('refuses prefixes outside 0..128, zone ids and garbage', () => {
    for (const bad of [
      '::/129',
      '2001:db8::/200',
      'fe80::1%eth0/64',
      'fe80::1%eth0',
      'not an ip',
      '',
      '   ',
      '/24',
      '192.168.0.1/24 extra',
      'http://1.2.3.4',
    ]) {
      expect(() => parseCidr(bad), bad).toThrow(CidrError);
    }
    expect(() => parseCidr('::/129')).toThrow(/between 0 and 128/);
  });
});

describe('address keys (what isBlocked compares)', () => {
  it('are 32 lower-case hex digits and sort like the addresses', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), (a, b) => {
        const ka = toKey(a);
        const kb = toKey(b);
        expect(ka).toMatch(/^[0-9a-f]{32}$/);
        expect(ka < kb).toBe(a < b);
      }),
    );
  });

  it('read IPv4, IPv6, IPv4-mapped and zoned client addresses', () => {
    expect(addressKey('1.2.3.4')).toBe(addressKey('::ffff:1.2.3.4'));
    expect(addressKey('::FFFF:1.2.3.4')).toBe(addressKey('::ffff:102:304'));
    expect(addressKey('fe80::1%eth0')).toBe(addressKey('fe80::1'));
    expect(addressKey('nonsense')).toBeNull();
    expect(addressKey('')).toBeNull();
  });

  it('every address of a random CIDR falls between its ends, and the range is aligned', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 0xffffffffn }), fc.integer({ min: 0, max: 32 }), (v4, prefix) => {
        const text = `${[24n, 16n, 8n, 0n].map((s) => (v4 >> s) & 0xffn).join('.')}/${prefix}`;
        const r = parseCidr(text);
        const address = (0xffffn << 32n) | v4;
        expect(r.start <= address && address <= r.end).toBe(true);
        expect(r.end - r.start + 1n).toBe(1n << BigInt(32 - prefix));
        expect(r.start % (1n << BigInt(32 - prefix))).toBe(0n);
      }),
    );
  });
});

describe('parsed with ipaddr.js, stored as before', () => {
  it('gives the keys existing rows hold (range_start, range_end and client keys unchanged)', () => {
    // Computed by the hand-written parser this one replaced: a row stored then must still match.
    const ranges: Array<[string, string, string]> = [
      ['10.0.0.0/8', '00000000000000000000ffff0a000000', '00000000000000000000ffff0affffff'],
      ['192.168.0.1/24', '00000000000000000000ffffc0a80000', '00000000000000000000ffffc0a800ff'],
      ['203.0.113.7', '00000000000000000000ffffcb007107', '00000000000000000000ffffcb007107'],
      ['0.0.0.0/0', '00000000000000000000ffff00000000', '00000000000000000000ffffffffffff'],
      ['::/0', '00000000000000000000000000000000', 'ffffffffffffffffffffffffffffffff'],
      ['2001:db8::/32', '20010db8000000000000000000000000', '20010db8ffffffffffffffffffffffff'],
      ['2001:db8:1:2:3:4:5:6/64', '20010db8000100020000000000000000', '20010db800010002ffffffffffffffff'],
      ['::ffff:10.0.0.0/104', '00000000000000000000ffff0a000000', '00000000000000000000ffff0affffff'],
      ['::1.2.3.4/128', '00000000000000000000000001020304', '00000000000000000000000001020304'],
      ['64:ff9b::192.0.2.33/120', '0064ff9b0000000000000000c0000200', '0064ff9b0000000000000000c00002ff'],
      ['fe80::/10', 'fe800000000000000000000000000000', 'febfffffffffffffffffffffffffffff'],
      ['::1', '00000000000000000000000000000001', '00000000000000000000000000000001'],
    ];
    for (const [cidr, start, end] of ranges) {
      const r = parseCidr(cidr);
      expect([toKey(r.start), toKey(r.end)], cidr).toEqual([start, end]);
    }
    const clients: Array<[string, string]> = [
      ['1.2.3.4', '00000000000000000000ffff01020304'],
      ['::ffff:1.2.3.4', '00000000000000000000ffff01020304'],
      ['::1.2.3.4', '00000000000000000000000001020304'],
      ['fe80::1%eth0', 'fe800000000000000000000000000001'],
      ['2001:DB8::1', '20010db8000000000000000000000001'],
    ];
    for (const [address, key] of clients) expect(addressKey(address), address).toBe(key);
  });

  it('refuses the lenient forms ipaddr.js alone would take (octal, hex, short IPv4, IPv4-compatible read as mapped)', () => {
    // ipaddr.js on its own: 010.0.0.1 is octal (8.0.0.1), 0x7f.1 and 1.2.3 are short forms.
    expect(ipaddr.isValid('010.0.0.1')).toBe(true);
    expect(ipaddr.isValid('1.2.3')).toBe(true);
    expect(ipaddr.parse('::1.2.3.4').toNormalizedString()).toBe('0:0:0:0:0:ffff:102:304');
    for (const bad of ['010.0.0.1', '0x7f.0.0.1', '1.2.3', '2130706433', '1.2.3.4%eth0']) {
      expect(parseAddress(bad), bad).toBeNull();
      expect(() => parseCidr(`${bad}/8`), bad).toThrow(CidrError);
    }
    // RFC 4291: ::1.2.3.4 is IPv4-compatible (::102:304), not IPv4-mapped.
    expect(parseIPv6('::1.2.3.4')).toBe(0x01020304n);
    expect(toKey(parseCidr('::1.2.3.4').start)).toBe('00000000000000000000000001020304');
  });

  it('computes the same range as ipaddr.js for random CIDRs of both families', () => {
    const bytesOf = (v: bigint, n: number) => Array.from({ length: n }, (_, i) => Number((v >> BigInt((n - 1 - i) * 8)) & 0xffn));
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), fc.integer({ min: 0, max: 128 }), (value, prefix) => {
        const address = ipaddr.fromByteArray(bytesOf(value, 16)).toString();
        const r = parseCidr(`${address}/${prefix}`);
        const first = ipaddr.IPv6.networkAddressFromCIDR(`${address}/${prefix}`).toByteArray();
        const last = ipaddr.IPv6.broadcastAddressFromCIDR(`${address}/${prefix}`).toByteArray();
        expect(bytesOf(r.start, 16)).toEqual(first);
        expect(bytesOf(r.end, 16)).toEqual(last);
      }),
      { numRuns: 300 },
    );
  });
});
