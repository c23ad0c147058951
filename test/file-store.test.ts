/**
 * The FileStore contract (src/media/file-store.ts), on both stores: the local directory and S3 (a real
 * S3-compatible server on loopback, test/helpers/s3-server.ts). Large files go through multipart
 * uploads; a write that fails halfway leaves nothing visible (and the previous version intact).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { LocalFileStore, type FileStore } from '../src/media/file-store.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createFileStore, storageClientConfig } from '../src/media/media.ts';
import { ObjectIndexRepository } from '../src/media/object-index.ts';
import { S3FileStore } from '../src/media/s3-file-store.ts';
import { startS3Server, type S3Server } from './helpers/s3-server.ts';

const read = async (stream: Readable) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};
const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/** A stream of `bytes` bytes that fails after `failAt` of them. */
function failingStream(bytes: number, failAt: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= failAt) return void this.destroy(new Error('the disk went away'));
      const n = Math.min(1024 * 1024, bytes - sent);
      sent += n;
      this.push(Buffer.alloc(n, 9));
    },
  });
}

let s3: S3Server;
let tmp: string;
// The S3 store's object index (table stored_objects).
let database: Database;
let index: ObjectIndexRepository;
beforeAll(async () => {
  s3 = await startS3Server();
  tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'reelbase-store-'));
  database = openDatabase({ sqlitePath: ':memory:' });
  await migrateToLatest(database.db);
  index = new ObjectIndexRepository(database.db);
});
afterAll(async () => {
  await database?.destroy();
  await s3?.close();
  await fsp.rm(tmp, { recursive: true, force: true });
});

const stores: Array<[string, () => FileStore]> = [
  ['local', () => new LocalFileStore(path.join(tmp, 'media'))],
  ['s3', () => createFileStore(loadConfig({ ...s3.env, DATA_DIR: tmp, LOG_LEVEL: 'silent' }), index)],
];

describe.each(stores)('the %s file store', (kind, make) => {
  let store: FileStore;
  beforeAll(() => {
    store = make();
  });
  const scratch = async (name: string, data: Buffer) => {
    const file = path.join(tmp, `${kind}-${name}-${crypto.randomUUID()}`);
    await fsp.writeFile(file, data);
    return file;
  };

  it('stores from a path (taking it over) and from a stream; reads whole files and ranges; stats', async () => {
    const data = crypto.randomBytes(100_000);
    const source = await scratch('a', data);
    const stored = await store.put('videos/u1/r0/sd.mp4', source);
    expect(stored.size).toBe(100_000);
    expect(fs.existsSync(source)).toBe(false);
    expect(sha(await read(await store.createReadStream('videos/u1/r0/sd.mp4')))).toBe(sha(data));
    expect(await read(await store.createReadStream('videos/u1/r0/sd.mp4', { start: 10, end: 65_545 }))).toEqual(data.subarray(10, 65_546));
    expect(await read(await store.createReadStream('videos/u1/r0/sd.mp4', { start: 99_999, end: 99_999 }))).toEqual(data.subarray(99_999));
    await store.put('videos/u1/r0/hd.mp4', Readable.from([Buffer.from('hello'), Buffer.from(' world')]));
    expect((await read(await store.createReadStream('videos/u1/r0/hd.mp4'))).toString()).toBe('hello world');
    const stat = await store.stat('videos/u1/r0/hd.mp4');
    expect(stat?.size).toBe(11);
    expect(Math.abs(stat!.modifiedMs - Date.now())).toBeLessThan(60_000);
  });

  it('answers a missing file with null (stat) and ENOENT (read), and refuses keys that could escape', async () => {
    expect(await store.stat('videos/none/x.mp4')).toBeNull();
    const err = await (async () => {
      try {
        await read(await store.createReadStream('videos/none/x.mp4'));
      } catch (e) {
        return e as NodeJS.ErrnoException;
      }
    })();
    expect(err?.code).toBe('ENOENT');
    expect(await store.stat('../etc/passwd')).toBeNull();
    await expect(store.put('videos/../../x', Readable.from(['x']))).rejects.toThrow(/Invalid media key/);
  });

  it('stores a large file whole (multipart on S3) and replaces it whole', { timeout: 60_000 }, async () => {
    const data = crypto.randomBytes(20 * 1024 * 1024);
    await store.put('videos/u2/r0/hd.mp4', await scratch('big', data));
    expect((await store.stat('videos/u2/r0/hd.mp4'))?.size).toBe(data.length);
    expect(sha(await read(await store.createReadStream('videos/u2/r0/hd.mp4')))).toBe(sha(data));
    const range = await read(await store.createReadStream('videos/u2/r0/hd.mp4', { start: 12_000_000, end: 12_065_535 }));
    expect(range).toEqual(data.subarray(12_000_000, 12_065_536));
  });

  it('shows nothing of a write that fails halfway, and keeps the previous version', { timeout: 60_000 }, async () => {
    await expect(store.put('videos/u3/r0/sd.mp4', failingStream(20 * 1024 * 1024, 12 * 1024 * 1024))).rejects.toThrow();
    expect(await store.stat('videos/u3/r0/sd.mp4')).toBeNull();
    await store.put('videos/u3/r0/hd.mp4', Readable.from([Buffer.from('version 1')]));
    await expect(store.put('videos/u3/r0/hd.mp4', failingStream(20 * 1024 * 1024, 12 * 1024 * 1024))).rejects.toThrow();
    expect((await read(await store.createReadStream('videos/u3/r0/hd.mp4'))).toString()).toBe('version 1');
    if (kind === 's3') {
      // The failed multipart uploads were aborted: no parts are left in the bucket.
      const uploads = path.join(s3.directory, s3.bucket, '._S3rver_uploads');
      expect(fs.existsSync(uploads) ? fs.readdirSync(uploads) : []).toEqual([]);
    }
  });

  it('deletes a key and everything under it, past one listing page, and nothing else', { timeout: 120_000 }, async () => {
    const keys = Array.from({ length: 1003 }, (_, i) => `videos/u4/r${i % 3}/f${i}.jpg`);
    for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((k) => store.put(k, Readable.from([Buffer.from(k)]))));
    await store.put('videos/u40/r0/sd.mp4', Readable.from([Buffer.from('a neighbour')]));
    await store.delete('videos/u4');
    for (const k of [keys[0], keys[500], keys[1002]]) expect(await store.stat(k)).toBeNull();
    expect(await store.stat('videos/u40/r0/sd.mp4')).not.toBeNull();
    await store.delete('videos/u4'); // missing is fine
  });
});

/**
 * A TCP proxy in front of the S3 server that, while `cutting`, ends every connection once more than
 * `cutAfter` bytes of requests have passed on it: the server going away in the middle of a body.
 */
async function cuttingProxy(upstreamPort: number, cutAfter: number) {
  const sockets = new Set<net.Socket>();
  const proxy = {
    cutting: false,
    server: net.createServer((client) => {
      const upstream = net.connect(upstreamPort, '127.0.0.1');
      sockets.add(client).add(upstream);
      let sent = 0;
      client.on('data', (chunk: Buffer) => {
        sent += chunk.length;
        if (proxy.cutting && sent > cutAfter) {
          client.destroy();
          upstream.destroy();
        } else upstream.write(chunk);
      });
      upstream.pipe(client);
      const end = () => (client.destroy(), upstream.destroy());
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    }),
    port: 0,
    cut: () => {
      proxy.cutting = true;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => proxy.server.close(() => resolve()));
    },
  };
  await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
  proxy.port = (proxy.server.address() as net.AddressInfo).port;
  return proxy;
}

describe('the S3 store when the server fails in the middle of a write', () => {
  let proxy: Awaited<ReturnType<typeof cuttingProxy>>;
  let store: FileStore;
  beforeAll(async () => {
    proxy = await cuttingProxy(Number(new URL(s3.endpoint).port), 256 * 1024);
    store = createFileStore(loadConfig({ ...s3.env, S3_ENDPOINT: `http://127.0.0.1:${proxy.port}`, DATA_DIR: tmp, LOG_LEVEL: 'silent' }), index);
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it('shows nothing of a single PUT or a multipart upload cut off by the server, and keeps the previous version', { timeout: 60_000 }, async () => {
    const first = crypto.randomBytes(1024 * 1024);
    await store.put('videos/cut/r0/small.mp4', Readable.from([first]));
    await store.put('videos/cut/r0/large.mp4', Readable.from([first]));
    // From here every connection is new, and cut once a body has begun: none carried bytes before.
    proxy.cut();
    // One PUT (under the multipart threshold), and a multipart upload of three parts.
    await expect(store.put('videos/cut/r0/small.mp4', Readable.from([crypto.randomBytes(3 * 1024 * 1024)]))).rejects.toThrow();
    await expect(store.put('videos/cut/r0/large.mp4', Readable.from([crypto.randomBytes(20 * 1024 * 1024)]))).rejects.toThrow();
    await expect(store.put('videos/cut/r0/new.mp4', Readable.from([crypto.randomBytes(20 * 1024 * 1024)]))).rejects.toThrow();
    proxy.cutting = false;
    expect(sha(await read(await store.createReadStream('videos/cut/r0/small.mp4')))).toBe(sha(first));
    expect(sha(await read(await store.createReadStream('videos/cut/r0/large.mp4')))).toBe(sha(first));
    expect(await store.stat('videos/cut/r0/new.mp4')).toBeNull();
    // The cut multipart uploads were aborted: no parts are left in the bucket.
    const uploads = path.join(s3.directory, s3.bucket, '._S3rver_uploads');
    expect(fs.existsSync(uploads) ? fs.readdirSync(uploads) : []).toEqual([]);
    // The store works again once the server does.
    await store.put('videos/cut/r0/new.mp4', Readable.from([first]));
    expect((await store.stat('videos/cut/r0/new.mp4'))?.size).toBe(first.length);
  });
});

describe('the S3 store deletes folders without listing the bucket', () => {
  let store: S3FileStore;
  /** The S3 operations the store sends, by the SDK's command name. */
  const sent: string[] = [];
  beforeAll(() => {
    store = createFileStore(loadConfig({ ...s3.env, DATA_DIR: tmp, LOG_LEVEL: 'silent' }), index) as S3FileStore;
    store.client.middlewareStack.add(
      (next, context) => (args) => {
        sent.push(context.commandName as string);
        return next(args);
      },
      { step: 'initialize', name: 'recordCommands' },
    );
  });
  const put = (key: string) => store.put(key, Readable.from([Buffer.from(key)]));

  it('records the objects of an earlier release once, by the only listing, and then deletes them like any other', async () => {
    // Written before the index: straight to the bucket, not through the store.
    const { PutObjectCommand } = await import('@aws-sdk/client-s3');
    for (const k of ['videos/old1/r0/sd.mp4', 'videos/old1/r0/thumbnail-0.jpg', 'live/old2/p0001/seg-1.ts']) {
      await store.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `media/${k}`, Body: k }));
    }
    expect(await index.under('videos/old1', 10)).toEqual([]);
    // Until they are recorded, a delete finds them by listing (as before the index).
    await store.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'media/videos/old0/r0/sd.mp4', Body: 'old' }));
    sent.length = 0;
    await store.delete('videos/old0');
    expect(sent).toContain('ListObjectsV2Command');
    expect(await store.stat('videos/old0/r0/sd.mp4')).toBeNull();
    sent.length = 0;
    expect(await store.indexExisting()).toBeGreaterThanOrEqual(3);
    expect(sent.filter((c) => c === 'ListObjectsV2Command').length).toBeGreaterThan(0);
    expect(await index.under('videos/old1', 10)).toEqual(['videos/old1/r0/sd.mp4', 'videos/old1/r0/thumbnail-0.jpg']);
    sent.length = 0;
    expect(await store.indexExisting()).toBe(0); // once ever
    expect(sent).toEqual([]);
    await store.delete('videos/old1');
    await store.delete('live/old2');
    expect(sent).not.toContain('ListObjectsV2Command');
    for (const k of ['videos/old1/r0/sd.mp4', 'live/old2/p0001/seg-1.ts']) expect(await store.stat(k), k).toBeNull();
  });

  it('records every key it writes, and deletes a folder, the folder key itself included, from the recorded keys', async () => {
    const keys = ['videos/u5', 'videos/u5/r0/sd.mp4', 'videos/u5/r0/hls/720/seg-1.m4s', 'videos/u5/captions/3-r1.vtt'];
    for (const k of keys) await put(k);
    await put('videos/u50/r0/sd.mp4'); // a neighbour whose name starts like the folder's
    await put('videos/u5-x/r0/sd.mp4');
    expect(await index.under('videos/u5', 100)).toEqual([...keys].sort());
    sent.length = 0;
    await store.delete('videos/u5');
    expect(sent).not.toContain('ListObjectsV2Command');
    expect(sent).toEqual(['DeleteObjectsCommand']);
    for (const k of keys) expect(await store.stat(k), k).toBeNull();
    expect(await index.under('videos/u5', 100)).toEqual([]);
    expect(await store.stat('videos/u50/r0/sd.mp4')).not.toBeNull();
    expect(await store.stat('videos/u5-x/r0/sd.mp4')).not.toBeNull();
  });

  it('a key recorded for a write that failed is deleted without complaint', async () => {
    await expect(store.put('videos/u6/r0/sd.mp4', failingStream(20 * 1024 * 1024, 9 * 1024 * 1024))).rejects.toThrow();
    expect(await index.under('videos/u6', 10)).toEqual(['videos/u6/r0/sd.mp4']);
    await store.delete('videos/u6');
    expect(await index.under('videos/u6', 10)).toEqual([]);
  });
});

describe('STORAGE_URL', () => {
  it('selects the S3 store with its bucket and prefix, and refuses what is not s3://BUCKET[/PREFIX]', () => {
    const store = createFileStore(loadConfig({ ...s3.env, STORAGE_URL: 's3://media-bucket/reelbase/prod', DATA_DIR: tmp }), index);
    expect(store).toBeInstanceOf(S3FileStore);
    expect((store as S3FileStore).bucket).toBe('media-bucket');
    for (const bad of ['s3://', 's3://UPPER/x', 's3://b/../x', 'https://bucket/x']) {
      expect(() => loadConfig({ STORAGE_URL: bad, DATA_DIR: tmp }), bad).toThrow(/STORAGE_URL/);
    }
    expect(() => loadConfig({ MEDIA_DELIVERY: 'redirect', DATA_DIR: tmp })).toThrow(/MEDIA_DELIVERY=redirect needs STORAGE_URL/);
  });
});

describe('the S3 store keeps slices of media files read by range', () => {
  const SLICE = 64 * 1024;
  let store: S3FileStore;
  const gets: string[] = [];
  beforeAll(() => {
    const config = loadConfig({ ...s3.env, DATA_DIR: tmp, LOG_LEVEL: 'silent' });
    if (config.storage.kind !== 's3') throw new Error('S3 expected');
    store = new S3FileStore({ client: storageClientConfig(config), location: config.storage.location, index, readCacheBytes: 8 * SLICE, sliceBytes: SLICE });
    store.client.middlewareStack.add(
      (next, context) => (args) => {
        if (context.commandName === 'GetObjectCommand') gets.push(String((args.input as { Range?: string }).Range));
        return next(args);
      },
      { step: 'initialize', name: 'recordGets' },
    );
  });

  /** A small deterministic generator, so that a failure can be replayed. */
  const random = (seed: number) => () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

  it('answers every range byte for byte from slices fetched once each, across slice boundaries', async () => {
    const data = crypto.randomBytes(5 * SLICE + 1234);
    await store.put('videos/sl1/r0/hd.mp4', Readable.from([data]));
    gets.length = 0;
    const next = random(7);
    for (let i = 0; i < 300; i++) {
      const start = Math.floor(next() * data.length);
      const end = Math.min(data.length - 1, start + Math.floor(next() * 2 * SLICE) - 1);
      if (end < start) continue;
      const bytes = await read(await store.createReadStream('videos/sl1/r0/hd.mp4', { start, end }));
      expect(bytes.equals(data.subarray(start, end + 1)), `${start}-${end}`).toBe(true);
    }
    // Six slices (the last one short), each fetched once; the cache holds all of them.
    expect(gets.length).toBe(6);
    expect(gets).toContain(`bytes=${5 * SLICE}-${data.length - 1}`);
    // A read of more than two slices streams from the bucket; a small file read whole comes from slices.
    gets.length = 0;
    expect((await read(await store.createReadStream('videos/sl1/r0/hd.mp4', { start: 0, end: data.length - 1 }))).equals(data)).toBe(true);
    expect(await read(await store.createReadStream('videos/sl1/r0/hd.mp4'))).toEqual(data);
    expect(gets).toEqual([`bytes=0-${data.length - 1}`, 'undefined']);
    const small = crypto.randomBytes(SLICE + 10);
    await store.put('videos/sl1/r0/seg-1.m4s', Readable.from([small]));
    gets.length = 0;
    for (let i = 0; i < 3; i++) expect(await read(await store.createReadStream('videos/sl1/r0/seg-1.m4s'))).toEqual(small);
    expect(gets).toEqual([`bytes=0-${SLICE - 1}`, `bytes=${SLICE}-${SLICE + 9}`]);
  });

  it('keeps to its budget, least recently used out, and forgets a replaced or deleted file', async () => {
    const data = crypto.randomBytes(20 * SLICE);
    await store.put('videos/sl2/r0/hd.mp4', Readable.from([data]));
    for (let i = 0; i < 20; i++) await read(await store.createReadStream('videos/sl2/r0/hd.mp4', { start: i * SLICE, end: i * SLICE + 99 }));
    expect(store.slices!.bytes).toBeLessThanOrEqual(8 * SLICE);
    const fresh = crypto.randomBytes(20 * SLICE);
    await store.put('videos/sl2/r0/hd.mp4', Readable.from([fresh]));
    expect(
      (await read(await store.createReadStream('videos/sl2/r0/hd.mp4', { start: 19 * SLICE, end: 19 * SLICE + 99 }))).equals(
        fresh.subarray(19 * SLICE, 19 * SLICE + 100),
      ),
    ).toBe(true);
    await store.delete('videos/sl2');
    const err = await store
      .createReadStream('videos/sl2/r0/hd.mp4', { start: 0, end: 99 })
      .then(read)
      .catch((e: NodeJS.ErrnoException) => e);
    expect((err as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  it('never fails a reader when slices are evicted while others are being read', async () => {
    const config = loadConfig({ ...s3.env, DATA_DIR: tmp, LOG_LEVEL: 'silent' });
    if (config.storage.kind !== 's3') throw new Error('S3 expected');
    const small = new S3FileStore({
      client: storageClientConfig(config),
      location: config.storage.location,
      index,
      readCacheBytes: 3 * SLICE,
      sliceBytes: SLICE,
    });
    const data = crypto.randomBytes(12 * SLICE);
    await small.put('videos/sl4/r0/hd.mp4', Readable.from([data]));
    for (let round = 0; round < 3; round++) {
      const reads = Array.from({ length: 12 }, (_, i) =>
        small.createReadStream('videos/sl4/r0/hd.mp4', { start: i * SLICE + 5, end: i * SLICE + 500 }).then(read),
      );
      const got = await Promise.all(reads);
      got.forEach((bytes, i) => expect(bytes.equals(data.subarray(i * SLICE + 5, i * SLICE + 501)), `slice ${i}`).toBe(true));
    }
    expect(small.slices!.bytes).toBeLessThanOrEqual(3 * SLICE);
  });

  it('reads other areas (live output, rewritten in place) straight from the bucket', async () => {
    await store.put('live/sl3/p0001/index', Readable.from([Buffer.from('version 1')]));
    await read(await store.createReadStream('live/sl3/p0001/index', { start: 0, end: 3 }));
    gets.length = 0;
    await read(await store.createReadStream('live/sl3/p0001/index', { start: 0, end: 3 }));
    expect(gets).toEqual(['bytes=0-3']);
  });
});
