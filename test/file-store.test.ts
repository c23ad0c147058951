/**
 * The FileStore contract (src/media/file-store.ts), on both stores: the local directory and S3 (a real
 * S3-compatible server on loopback, test/helpers/s3-server.ts). Large files go through multipart
 * uploads; a write that fails halfway leaves nothing visible (and the previous version intact).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { LocalFileStore, type FileStore } from '../src/media/file-store.ts';
import { createFileStore } from '../src/media/media.ts';
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
beforeAll(async () => {
  s3 = await startS3Server();
  tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'reelbase-store-'));
});
afterAll(async () => {
  await s3?.close();
  await fsp.rm(tmp, { recursive: true, force: true });
});

const stores: Array<[string, () => FileStore]> = [
  ['local', () => new LocalFileStore(path.join(tmp, 'media'))],
  ['s3', () => createFileStore(loadConfig({ ...s3.env, DATA_DIR: tmp, LOG_LEVEL: 'silent' }))],
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

describe('STORAGE_URL', () => {
  it('selects the S3 store with its bucket and prefix, and refuses what is not s3://BUCKET[/PREFIX]', () => {
    const store = createFileStore(loadConfig({ ...s3.env, STORAGE_URL: 's3://media-bucket/reelbase/prod', DATA_DIR: tmp }));
    expect(store).toBeInstanceOf(S3FileStore);
    expect((store as S3FileStore).bucket).toBe('media-bucket');
    for (const bad of ['s3://', 's3://UPPER/x', 's3://b/../x', 'https://bucket/x']) {
      expect(() => loadConfig({ STORAGE_URL: bad, DATA_DIR: tmp }), bad).toThrow(/STORAGE_URL/);
    }
    expect(() => loadConfig({ MEDIA_DELIVERY: 'redirect', DATA_DIR: tmp })).toThrow(/MEDIA_DELIVERY=redirect needs STORAGE_URL/);
  });
});
