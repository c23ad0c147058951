import { lookup as dnsLookup } from 'node:dns/promises';
import fs from 'node:fs';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { classifyAddress, describeClass } from './ip-address.ts';

/**
 * Outgoing HTTP on a user's behalf (source downloads, webhooks) without server-side request forgery:
 *
 * - only http and https URLs;
 * - the host name is resolved once (all addresses), and every address must be public (see
 *   ip-address.ts) unless the host is listed in the allow-list (UPLOAD_ALLOWED_HOSTS);
 * - the connection goes to the address that was checked (a pinned `lookup`), so a second DNS answer
 *   cannot point the request elsewhere (DNS rebinding);
 * - redirects are followed at most `maxRedirects` times, each target checked again;
 * - sizes are capped (Content-Length and the bytes actually received), and there are connect, idle
 *   (no byte for a while: a stalled server frees its worker slot) and total timeouts.
 */

export type FetchErrorKind = 'bad_url' | 'refused_address' | 'dns' | 'network' | 'tls' | 'timeout' | 'http_status' | 'too_large' | 'redirects' | 'aborted';

export class SafeFetchError extends Error {
  constructor(
    readonly kind: FetchErrorKind,
    message: string,
    /** True when trying again cannot help (refused address, 404, too large…). */
    readonly permanent: boolean,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

export interface SafeFetchOptions {
  /** Hosts fetched whatever their addresses: `host` (any port) or `host:port`, lower case. */
  allowedHosts?: string[];
  /** Largest body accepted, in bytes. */
  maxBytes?: number;
  /** Time to resolve and connect, per hop. Default 10 s. */
  connectTimeoutMs?: number;
  /** Time for the whole exchange, redirects and body included. Default 60 s. */
  timeoutMs?: number;
  /** Longest wait for the next byte (the answer's headers, then each piece of the body). Default 30 s. */
  idleTimeoutMs?: number;
  /** Redirects followed (downloads only). Default 3. */
  maxRedirects?: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** Name resolution; default dns.lookup with all addresses (tests inject their own). */
  resolve?: (hostname: string) => Promise<ResolvedAddress[]>;
}

const USER_AGENT = 'Reelbase/1 (+media fetcher)';
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const defaultResolve = async (hostname: string): Promise<ResolvedAddress[]> => dnsLookup(hostname, { all: true, verbatim: true });

/** Whether `url` names an allow-listed host (`host`, `host:port`, `[v6]`, `[v6]:port`). */
export function isAllowedHost(url: URL, allowedHosts: string[] = []): boolean {
  if (allowedHosts.length === 0) return false;
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  for (const raw of allowedHosts) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    let entryHost = entry;
    let entryPort: string | undefined;
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    if (bracketed) {
      entryHost = bracketed[1];
      entryPort = bracketed[2];
    } else if ((entry.match(/:/g) ?? []).length === 1) {
      [entryHost, entryPort] = entry.split(':');
    }
    if (entryHost === host && (entryPort === undefined || entryPort === port)) return true;
  }
  return false;
}

function parseHttpUrl(raw: string | URL): URL {
  let url: URL;
  try {
    url = raw instanceof URL ? raw : new URL(raw);
  } catch {
    throw new SafeFetchError('bad_url', 'The URL is not valid', true);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SafeFetchError('bad_url', `Only http and https URLs can be fetched (got ${url.protocol.replace(/:$/, '')})`, true);
  }
  if (!url.hostname) throw new SafeFetchError('bad_url', 'The URL has no host', true);
  return url;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SafeFetchError('timeout', `${what} timed out`, false)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Resolves the URL's host and checks every address; answers the address to connect to.
 * Throws a permanent `refused_address` error when an address is not public and the host is not allowed.
 */
export async function checkDestination(url: URL, options: SafeFetchOptions = {}): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const allowed = isAllowedHost(url, options.allowedHosts);
  let addresses: ResolvedAddress[];
  const literal = isIP(host);
  if (literal) {
    addresses = [{ address: host, family: literal }];
  } else {
    try {
      addresses = await withTimeout((options.resolve ?? defaultResolve)(host), options.connectTimeoutMs ?? 10_000, `Resolving ${host}`);
    } catch (err) {
      if (err instanceof SafeFetchError) throw err;
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      throw new SafeFetchError('dns', `The host ${host} could not be resolved (${code})`, false);
    }
    if (addresses.length === 0) throw new SafeFetchError('dns', `The host ${host} has no address`, false);
  }
  if (!allowed) {
    for (const { address } of addresses) {
      const kind = classifyAddress(address);
      if (kind !== 'public') {
        throw new SafeFetchError(
          'refused_address',
          `The host ${host} resolves to ${describeClass(kind)}, which is not fetched (see UPLOAD_ALLOWED_HOSTS)`,
          true,
        );
      }
    }
  }
  return addresses[0];
}

function networkError(err: unknown, url: URL): SafeFetchError {
  if (err instanceof SafeFetchError) return err;
  const e = err as NodeJS.ErrnoException;
  const code = e.code ?? '';
  if (/^(ERR_TLS|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_SSL)/.test(code)) {
    return new SafeFetchError('tls', `TLS with ${url.host} failed (${code})`, true);
  }
  return new SafeFetchError('network', `Could not fetch from ${url.host} (${code || e.message || 'network error'})`, false);
}

/** One request to one checked address; resolves with the response (body not read). `progress` is told when the headers arrive. */
async function requestOnce(
  url: URL,
  method: string,
  body: Buffer | undefined,
  options: SafeFetchOptions,
  signal: AbortSignal,
  progress: () => void,
): Promise<IncomingMessage> {
  const target = await checkDestination(url, options);
  const pinned = ((_hostname: string, opts: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (opts?.all) callback(null, [target]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
  const transport = url.protocol === 'https:' ? https : http;
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = transport.request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method,
      agent: false,
      lookup: pinned,
      signal,
      headers: {
        'user-agent': USER_AGENT,
        'accept-encoding': 'identity',
        ...(options.headers ?? {}),
        ...(body ? { 'content-length': String(body.length) } : {}),
      },
    });
    const connectTimer = setTimeout(() => req.destroy(new SafeFetchError('timeout', `Connecting to ${url.host} timed out`, false)), connectTimeoutMs);
    req.once('socket', (socket) => {
      const connected = () => clearTimeout(connectTimer);
      if (!socket.connecting) connected();
      socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', connected);
    });
    req.once('response', (res) => {
      clearTimeout(connectTimer);
      progress();
      resolve(res);
    });
    req.on('error', (err) => {
      clearTimeout(connectTimer);
      reject(err); // no effect once the response arrived: body errors surface on the response
    });
    req.end(body);
  });
}

function statusError(status: number, url: URL): SafeFetchError {
  const retryable = status >= 500 || status === 408 || status === 425 || status === 429;
  return new SafeFetchError('http_status', `${url.host} answered HTTP ${status}`, !retryable, status);
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

/**
 * Runs `work` under the caller's signal, a total timeout and an idle timeout, mapping aborts to
 * SafeFetchErrors. `work` calls `progress` whenever bytes arrive; the idle timer starts over then.
 */
async function guarded<T>(options: SafeFetchOptions, work: (signal: AbortSignal, progress: () => void) => Promise<T>, url: URL): Promise<T> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new SafeFetchError('timeout', `Fetching from ${url.host} timed out`, false)), options.timeoutMs ?? 60_000);
  const idleMs = options.idleTimeoutMs ?? 30_000;
  const idle = new AbortController();
  const idleError = () => new SafeFetchError('timeout', `${url.host} sent no data for ${seconds(idleMs)}`, false);
  const idleTimer = setTimeout(() => idle.abort(idleError()), idleMs);
  const progress = () => idleTimer.refresh();
  const signal = AbortSignal.any([...(options.signal ? [options.signal] : []), timeout.signal, idle.signal]);
  try {
    return await work(signal, progress);
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason ?? new SafeFetchError('aborted', 'The fetch was aborted', false);
    if (timeout.signal.aborted) throw timeout.signal.reason as SafeFetchError;
    if (idle.signal.aborted) throw idle.signal.reason as SafeFetchError;
    throw networkError(err, url);
  } finally {
    clearTimeout(timer);
    clearTimeout(idleTimer);
  }
}

/** Follows redirects (re-checking each target) up to a 2xx response. */
async function openFollowing(start: URL, options: SafeFetchOptions, signal: AbortSignal, progress: () => void): Promise<{ res: IncomingMessage; url: URL }> {
  const maxRedirects = options.maxRedirects ?? 3;
  let url = start;
  for (let hop = 0; ; hop++) {
    const res = await requestOnce(url, 'GET', undefined, options, signal, progress);
    const status = res.statusCode ?? 0;
    if (REDIRECTS.has(status) && res.headers.location) {
      res.resume();
      if (hop >= maxRedirects) throw new SafeFetchError('redirects', `More than ${maxRedirects} redirects`, true);
      let next: URL;
      try {
        next = new URL(res.headers.location, url);
      } catch {
        throw new SafeFetchError('bad_url', 'A redirect points to an invalid URL', true);
      }
      url = parseHttpUrl(next);
      continue;
    }
    if (status < 200 || status >= 300) {
      res.resume();
      throw statusError(status, url);
    }
    return { res, url };
  }
}

function tooLarge(maxBytes: number) {
  return new SafeFetchError('too_large', `The file is larger than the limit of ${maxBytes} bytes`, true);
}

export interface DownloadResult {
  bytes: number;
  contentType: string | null;
  /** The URL the body came from, after redirects. */
  url: string;
}

/** Downloads `rawUrl` into the file `destination` (created or truncated), within the size cap. */
export async function safeDownload(rawUrl: string, destination: string, options: SafeFetchOptions = {}): Promise<DownloadResult> {
  const start = parseHttpUrl(rawUrl);
  const maxBytes = options.maxBytes ?? Number.MAX_SAFE_INTEGER;
  return guarded(
    options,
    async (signal, progress) => {
      const { res, url } = await openFollowing(start, options, signal, progress);
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        res.destroy();
        throw tooLarge(maxBytes);
      }
      let bytes = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          progress();
          bytes += chunk.length;
          if (bytes > maxBytes) return done(tooLarge(maxBytes));
          done(null, chunk);
        },
      });
      await pipeline(res, counter, fs.createWriteStream(destination), { signal });
      return { bytes, contentType: res.headers['content-type'] ?? null, url: url.href };
    },
    start,
  );
}

export interface PostResult {
  status: number;
  /** The first 64 KiB of the answer. */
  body: string;
}

/** POSTs `body` to `rawUrl` (no redirects followed: a 3xx is an answer like any other). */
export async function safePost(rawUrl: string, body: string | Buffer, options: SafeFetchOptions = {}): Promise<PostResult> {
  const url = parseHttpUrl(rawUrl);
  const payload = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return guarded(
    options,
    async (signal, progress) => {
      const res = await requestOnce(url, 'POST', payload, options, signal, progress);
      const chunks: Buffer[] = [];
      let kept = 0;
      for await (const chunk of res) {
        progress();
        if (kept < 65_536) {
          chunks.push(chunk as Buffer);
          kept += (chunk as Buffer).length;
        }
      }
      return { status: res.statusCode ?? 0, body: Buffer.concat(chunks).subarray(0, 65_536).toString('utf8') };
    },
    url,
  );
}
