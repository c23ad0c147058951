import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyAddress } from '../../src/net/ip-address.ts';
import { isAllowedHost, safeDownload, SafeFetchError, safePost, type ResolvedAddress } from '../../src/net/safe-fetch.ts';

describe('address classification', () => {
  const cases: Array<[string, string]> = [
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4001:80b::200e', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.169.254', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf::1', 'link_local'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    // IPv4 carried in IPv6 is judged by the IPv4 address.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'link_local'],
    ['::ffff:100.64.0.1', 'shared'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['2002:c0a8:0101::1', 'private'],
    // Only plain global unicast passes: IPv6 transition forms are refused even around a public IPv4.
    ['::ffff:8.8.8.8', 'translated'],
    ['::ffff:808:808', 'translated'],
    ['::8.8.8.8', 'translated'],
    ['::ffff:0:8.8.8.8', 'translated'],
    ['64:ff9b::8.8.8.8', 'translated'],
    ['64:ff9b:1::a00:1', 'translated'], // NAT64 local-use prefix (RFC 8215)
    ['64:ff9b:1:ffff::1', 'translated'],
    ['2002:808:808::1', 'translated'], // 6to4
    ['2001:0::1', 'translated'], // Teredo 2001::/32
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'translated'],
    ['2001:2::1', 'reserved'], // benchmarking 2001:2::/48
    ['2001:2:0:ffff::1', 'reserved'],
    ['198.18.0.1', 'reserved'], // benchmarking 198.18.0.0/15
    ['198.19.255.255', 'reserved'],
    ['198.51.100.7', 'reserved'], // documentation
    ['203.0.113.7', 'reserved'],
    ['2001:db8:ffff::1', 'reserved'],
    ['3fff::1', 'reserved'], // documentation (RFC 9637)
    ['192.0.0.9', 'reserved'],
    ['192.88.99.1', 'reserved'], // 6to4 relay anycast
    ['240.0.0.1', 'reserved'],
    ['0.1.2.3', 'reserved'],
    ['100::1', 'reserved'], // discard-only
    ['2001:10::1', 'reserved'], // ORCHID
    ['2001:20::1', 'reserved'], // ORCHIDv2
    ['2620:4f:8000::1', 'reserved'], // AS112
    ['5f00::1', 'reserved'], // segment routing
    ['4000::1', 'reserved'], // outside 2000::/3 global unicast
    ['::2', 'reserved'], // IPv4-compatible 0.0.0.2 (ipaddr.js alone calls it unicast)
    ['::7f00:1', 'loopback'],
    ['ff0e::1', 'multicast'],
    ['fec0::1', 'private'],
    ['100.100.100.100', 'shared'],
    ['nonsense', 'invalid'],
    ['010.0.0.1', 'invalid'],
    ['0x7f.0.0.1', 'invalid'],
    ['2130706433', 'invalid'],
    ['1.2.3', 'invalid'],
    ['256.1.1.1', 'invalid'],
  ];
  it.each(cases)('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });
});

describe('allow-list', () => {
  it('matches a host on any port, or host:port exactly', () => {
    const list = ['media.internal', '127.0.0.1:8080', '[::1]:9000', 'fd00::5'];
    expect(isAllowedHost(new URL('http://media.internal/x'), list)).toBe(true);
    expect(isAllowedHost(new URL('https://MEDIA.internal:8443/x'), list)).toBe(true);
    expect(isAllowedHost(new URL('http://127.0.0.1:8080/x'), list)).toBe(true);
    expect(isAllowedHost(new URL('http://127.0.0.1:8081/x'), list)).toBe(false);
    expect(isAllowedHost(new URL('http://127.0.0.1/x'), list)).toBe(false);
    expect(isAllowedHost(new URL('http://[::1]:9000/x'), list)).toBe(true);
    expect(isAllowedHost(new URL('http://[::1]:9001/x'), list)).toBe(false);
    expect(isAllowedHost(new URL('http://[fd00::5]:1234/x'), list)).toBe(true);
    expect(isAllowedHost(new URL('http://other.internal/x'), list)).toBe(false);
    expect(isAllowedHost(new URL('http://media.internal.evil.com/x'), list)).toBe(false);
    expect(isAllowedHost(new URL('http://127.0.0.1/x'), [])).toBe(false);
  });
});

describe('safe fetch', () => {
  let server: http.Server;
  let port: number;
  let dir: string;
  const seen: Array<{ url: string; host: string | undefined }> = [];

  beforeAll(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'reelbase-ssrf-'));
    server = http.createServer((req, res) => {
      seen.push({ url: req.url ?? '', host: req.headers.host });
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/redirect') return void res.writeHead(302, { location: url.searchParams.get('to')! }).end();
      if (url.pathname === '/hang') return; // never answers
      if (url.pathname === '/stall') return void res.writeHead(200, { 'content-length': '100' }).flushHeaders(); // headers, then nothing
      if (url.pathname === '/post-stall') return void req.resume(); // reads the body, never answers
      if (url.pathname === '/drip') {
        // 10 bytes, 100 ms apart.
        res.writeHead(200, { 'content-length': '10' });
        let sent = 0;
        const timer = setInterval(() => {
          if (++sent < 10) return void res.write('x');
          clearInterval(timer);
          res.end('x');
        }, 100);
        return void res.on('close', () => clearInterval(timer));
      }
      if (url.pathname === '/big') return void res.end(Buffer.alloc(10_000));
      if (url.pathname === '/post') return void req.resume().on('end', () => res.writeHead(201).end('created'));
      res.end('hello');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await fsp.rm(dir, { recursive: true, force: true });
  });

  const dest = () => path.join(dir, `f-${Math.random().toString(36).slice(2)}`);
  const fails = async (promise: Promise<unknown>) => {
    const err = await promise.then(
      () => null,
      (e) => e,
    );
    expect(err).toBeInstanceOf(SafeFetchError);
    return err as SafeFetchError;
  };
  const resolver =
    (table: Record<string, string[]>, calls: string[] = []) =>
    async (host: string): Promise<ResolvedAddress[]> => {
      calls.push(host);
      const list = table[host];
      if (!list) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };

  it('refuses non-http schemes and private literal addresses without connecting', async () => {
    const before = seen.length;
    for (const url of ['ftp://example.com/x', 'file:///etc/passwd', 'gopher://x/']) {
      expect((await fails(safeDownload(url, dest()))).kind).toBe('bad_url');
    }
    for (const url of [`http://127.0.0.1:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`, 'http://0x7f.1/', 'http://2130706433/', 'http://169.254.169.254/']) {
      const err = await fails(safeDownload(url, dest()));
      expect([err.kind, err.permanent], url).toEqual(['refused_address', true]);
    }
    expect(seen.length).toBe(before);
  });

  it('refuses a host name when any of its addresses is private', async () => {
    const resolve = resolver({ 'mixed.test': ['93.184.216.34', '10.0.0.7'], 'inside.test': ['fd00::1'] });
    expect((await fails(safeDownload('http://mixed.test/x', dest(), { resolve }))).message).toMatch(/private network address/);
    expect((await fails(safeDownload('http://inside.test/x', dest(), { resolve }))).kind).toBe('refused_address');
    const missing = await fails(safeDownload('http://nowhere.test/x', dest(), { resolve }));
    expect([missing.kind, missing.permanent]).toEqual(['dns', false]);
  });

  it('connects to the address it checked (resolved once per hop, never again by the HTTP client)', async () => {
    const calls: string[] = [];
    const resolve = resolver({ 'pinned.test': ['127.0.0.1'] }, calls);
    const file = dest();
    // pinned.test exists only in this resolver: the request can only arrive if the checked address is used.
    const result = await safeDownload(`http://pinned.test:${port}/hello`, file, { allowedHosts: [`pinned.test:${port}`], resolve });
    expect(result.bytes).toBe(5);
    expect(fs.readFileSync(file, 'utf8')).toBe('hello');
    expect(calls).toEqual(['pinned.test']);
    expect(seen.at(-1)).toEqual({ url: '/hello', host: `pinned.test:${port}` });
  });

  it('re-checks every redirect target and stops after three redirects', async () => {
    const resolve = resolver({ 'evil.test': ['192.168.0.10'] });
    const allowed = [`127.0.0.1:${port}`];
    const toPrivate = `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent('http://evil.test/secret')}`;
    expect((await fails(safeDownload(toPrivate, dest(), { allowedHosts: allowed, resolve }))).kind).toBe('refused_address');
    const toScheme = `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`;
    expect((await fails(safeDownload(toScheme, dest(), { allowedHosts: allowed }))).kind).toBe('bad_url');
    const hop = (to: string) => `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent(to)}`;
    const three = hop(hop(hop(`http://127.0.0.1:${port}/ok`)));
    expect((await safeDownload(three, dest(), { allowedHosts: allowed })).bytes).toBe(5);
    const four = hop(three);
    expect((await fails(safeDownload(four, dest(), { allowedHosts: allowed }))).kind).toBe('redirects');
  });

  it('caps the size, and times out a silent server (retryable)', async () => {
    const allowed = [`127.0.0.1:${port}`];
    const big = await fails(safeDownload(`http://127.0.0.1:${port}/big`, dest(), { allowedHosts: allowed, maxBytes: 9_999 }));
    expect([big.kind, big.permanent]).toEqual(['too_large', true]);
    expect((await safeDownload(`http://127.0.0.1:${port}/big`, dest(), { allowedHosts: allowed, maxBytes: 10_000 })).bytes).toBe(10_000);
    const slow = await fails(safeDownload(`http://127.0.0.1:${port}/hang`, dest(), { allowedHosts: allowed, timeoutMs: 200 }));
    expect([slow.kind, slow.permanent]).toEqual(['timeout', false]);
  });

  it('fails a server that stops sending (idle timeout, retryable), not one that is merely slow', async () => {
    const allowed = [`127.0.0.1:${port}`];
    const options = { allowedHosts: allowed, idleTimeoutMs: 200, timeoutMs: 10_000 };
    const started = Date.now();
    const stalled = await fails(safeDownload(`http://127.0.0.1:${port}/stall`, dest(), options));
    expect([stalled.kind, stalled.permanent, stalled.message]).toEqual(['timeout', false, `127.0.0.1:${port} sent no data for 0.2 s`]);
    expect(Date.now() - started).toBeLessThan(2000); // not the 10 s total timeout
    // No answer at all (not even headers) counts too.
    expect((await fails(safeDownload(`http://127.0.0.1:${port}/hang`, dest(), options))).message).toMatch(/sent no data for 0\.2 s$/);
    // A byte every 100 ms for a second: slower than the idle timeout in all, but never idle that long.
    expect((await safeDownload(`http://127.0.0.1:${port}/drip`, dest(), { ...options, idleTimeoutMs: 400 })).bytes).toBe(10);
    const post = await fails(safePost(`http://127.0.0.1:${port}/post-stall`, '{}', options));
    expect([post.kind, post.permanent, post.message]).toEqual(['timeout', false, `127.0.0.1:${port} sent no data for 0.2 s`]);
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('job stopping')), 50);
    const err = await safeDownload(`http://127.0.0.1:${port}/hang`, dest(), { allowedHosts: [`127.0.0.1:${port}`], signal: controller.signal }).catch((e) => e);
    expect(err.message).toBe('job stopping');
  });

  it('POSTs under the same rules', async () => {
    expect(await safePost(`http://127.0.0.1:${port}/post`, '{"a":1}', { allowedHosts: [`127.0.0.1:${port}`] })).toEqual({ status: 201, body: 'created' });
    expect((await fails(safePost(`http://127.0.0.1:${port}/post`, '{}'))).kind).toBe('refused_address');
  });
});
