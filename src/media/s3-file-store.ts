import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { Readable } from 'node:stream';
import type * as S3 from '@aws-sdk/client-s3';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type * as S3Storage from '@aws-sdk/lib-storage';
import type * as S3Presigner from '@aws-sdk/s3-request-presigner';
import { whenUsed } from '../lib/when-used.ts';
import type { S3Location } from '../lib/storage-url.ts';
import { contentTypeOf } from './content-types.ts';
import { InvalidKeyError, isValidKey, type ByteRange, type FileStore, type StoredFile } from './file-store.ts';
import type { ObjectIndex } from './object-index.ts';
import { SliceCache } from './slice-cache.ts';

const sdk = whenUsed<typeof S3>('@aws-sdk/client-s3');
const storage = whenUsed<typeof S3Storage>('@aws-sdk/lib-storage');
const presigner = whenUsed<typeof S3Presigner>('@aws-sdk/s3-request-presigner');

export interface S3StoreOptions {
  client: S3ClientConfig;
  location: S3Location;
  /** The keys of the store's objects, from which folders are deleted without listing. */
  index: ObjectIndex;
  /** MEDIA_DELIVERY=redirect: files are answered by a redirect to a presigned URL of this lifetime. */
  redirectSeconds?: number;
  /** Memory for slices of files under `videos/` read by range (S3_READ_CACHE_MB); 0: none. */
  readCacheBytes?: number;
  /** The slices' size (1 MiB). */
  sliceBytes?: number;
}

const STAT_TTL_MS = 10_000;
const STAT_CACHE_SIZE = 10_000;

/** What a missing object fails with, as the FileStore contract says (code ENOENT). */
const missing = (key: string) => Object.assign(new Error(`No stored file ${key}`), { code: 'ENOENT' });

const isNotFound = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};

/**
 * The FileStore on S3-compatible object storage (docs/media.md, "Object storage"). Writes go through
 * lib-storage's Upload (one PUT for small files, a multipart upload for large ones, aborted on failure),
 * so an object appears whole or not at all. Every key is recorded in the object index before its
 * object is written, and a folder is deleted from the index's keys, in batches, never by listing.
 */
export class S3FileStore implements FileStore {
  readonly client: S3Client;
  readonly bucket: string;
  private readonly prefix: string;
  private readonly redirectSeconds?: number;
  private readonly index: ObjectIndex;
  /** Range reads of files under `videos/` (immutable, like the HEADs kept in `stats`). */
  readonly slices: SliceCache | null;
  /**
   * What HEAD answered for files under `videos/` (renditions, thumbnails, originals: each written once
   * under a folder of its own run), kept STAT_TTL_MS: a range read is then one request to S3 instead of
   * two. Dropped at once by this process's own put and delete.
   */
  private readonly stats = new Map<string, { value: StoredFile; until: number }>();
  /** The object index is known to be complete (indexComplete). */
  private complete = false;

  constructor(options: S3StoreOptions) {
    this.client = new (sdk().S3Client)(options.client);
    this.bucket = options.location.bucket;
    this.prefix = options.location.prefix;
    this.redirectSeconds = options.redirectSeconds;
    this.index = options.index;
    const cacheBytes = options.readCacheBytes ?? 0;
    this.slices = cacheBytes > 0 ? new SliceCache(options.sliceBytes ?? 1024 * 1024, cacheBytes, (key, range) => this.readBytes(key, range)) : null;
    if (this.redirectSeconds) this.deliveryUrl = (key) => this.presign(key, this.redirectSeconds!);
  }

  private objectKey(key: string): string {
    const clean = key.replace(/\/+$/, '');
    if (!isValidKey(clean)) throw new InvalidKeyError(`Invalid media key: ${JSON.stringify(key)}`);
    return this.prefix ? `${this.prefix}/${clean}` : clean;
  }

  async put(key: string, from: string | Readable): Promise<StoredFile> {
    const Key = this.objectKey(key);
    await this.index.record(key);
    const Body = typeof from === 'string' ? fs.createReadStream(from) : from;
    const upload = new (storage().Upload)({
      client: this.client,
      params: { Bucket: this.bucket, Key, Body, ContentType: contentTypeOf(key) },
      partSize: 8 * 1024 * 1024,
      queueSize: 4,
      leavePartsOnError: false,
    });
    await upload.done();
    // A path source is taken over, as by the local store's rename.
    if (typeof from === 'string') await fsp.rm(from, { force: true });
    this.stats.delete(key);
    this.slices?.forget(key);
    const stored = await this.stat(key);
    if (!stored) throw missing(key);
    return stored;
  }

  async createReadStream(key: string, range?: ByteRange): Promise<Readable> {
    // Ranges of a player's reads, and small files read whole (HLS segments, thumbnails), through slices.
    if (this.slices && key.startsWith('videos/') && (!range || this.slices.covers(range))) {
      const stat = await this.stat(key);
      if (!stat) throw missing(key);
      const wanted = range ?? { start: 0, end: stat.size - 1 };
      if (stat.size > 0 && wanted.end < stat.size && this.slices.covers(wanted)) return Readable.from([await this.slices.read(key, stat.size, wanted)]);
    }
    try {
      const out = await this.client.send(
        new (sdk().GetObjectCommand)({ Bucket: this.bucket, Key: this.objectKey(key), Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      return out.Body as Readable;
    } catch (err) {
      if (isNotFound(err)) throw missing(key);
      throw err;
    }
  }

  /** The bytes of a range of an object, in memory (a slice). */
  private async readBytes(key: string, range: ByteRange): Promise<Buffer> {
    try {
      const out = await this.client.send(
        new (sdk().GetObjectCommand)({ Bucket: this.bucket, Key: this.objectKey(key), Range: `bytes=${range.start}-${range.end}` }),
      );
      const bytes = await out.Body!.transformToByteArray();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } catch (err) {
      if (isNotFound(err)) throw missing(key);
      throw err;
    }
  }

  async stat(key: string): Promise<StoredFile | null> {
    let Key: string;
    try {
      Key = this.objectKey(key);
    } catch (err) {
      if (err instanceof InvalidKeyError) return null;
      throw err;
    }
    const cached = this.stats.get(key);
    if (cached && cached.until > Date.now()) return cached.value;
    try {
      const head = await this.client.send(new (sdk().HeadObjectCommand)({ Bucket: this.bucket, Key }));
      const value = { size: head.ContentLength ?? 0, modifiedMs: head.LastModified?.getTime() ?? 0 };
      if (key.startsWith('videos/')) {
        if (this.stats.size >= STAT_CACHE_SIZE) this.stats.delete(this.stats.keys().next().value!);
        this.stats.set(key, { value, until: Date.now() + STAT_TTL_MS });
      }
      return value;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async delete(prefix: string): Promise<void> {
    const folder = prefix.replace(/\/+$/, '');
    this.objectKey(folder); // refuses what is not a key
    for (const key of this.stats.keys()) if (key === folder || key.startsWith(`${folder}/`)) this.stats.delete(key);
    this.slices?.forget(folder);
    // Until the objects of an earlier release are recorded (indexExisting), a folder may hold objects
    // the index does not know: those are found by listing, as before the index.
    if (!(await this.indexComplete())) await this.deleteListed(folder);
    for (;;) {
      const keys = await this.index.under(folder, 1000);
      if (keys.length === 0) return;
      await this.deleteObjects(
        keys.map((key) => this.objectKey(key)),
        folder,
      );
      await this.index.forget(keys);
    }
  }

  /** Whether the index holds every object (remembered once true: it never becomes false again). */
  private async indexComplete(): Promise<boolean> {
    if (!this.complete) this.complete = await this.index.isComplete();
    return this.complete;
  }

  /** One DeleteObjects request (at most 1,000 keys, bucket keys); an object already gone is no failure. */
  private async deleteObjects(objectKeys: string[], folder: string): Promise<void> {
    const Objects = objectKeys.map((Key) => ({ Key }));
    const out = await this.client.send(new (sdk().DeleteObjectsCommand)({ Bucket: this.bucket, Delete: { Objects, Quiet: true } }));
    const failed = (out.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
    if (failed.length > 0) throw new Error(`Deleting ${folder} failed for ${failed.length} objects: ${failed[0].Code} ${failed[0].Message}`);
  }

  /** Deletes what a listing of the folder finds (only while the index is not complete). */
  private async deleteListed(folder: string): Promise<void> {
    const base = this.objectKey(folder);
    let token: string | undefined;
    do {
      const page = await this.client.send(new (sdk().ListObjectsV2Command)({ Bucket: this.bucket, Prefix: `${base}/`, ContinuationToken: token }));
      const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [o.Key] : []));
      if (keys.length > 0) await this.deleteObjects(keys, folder);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /**
   * Objects written before the store kept an index (an earlier release) are recorded once, by the one
   * listing of the store there ever is; later starts see the index complete and list nothing.
   */
  async indexExisting(): Promise<number> {
    if (await this.indexComplete()) return 0;
    const base = this.prefix ? `${this.prefix}/` : '';
    let recorded = 0;
    let token: string | undefined;
    do {
      const page = await this.client.send(new (sdk().ListObjectsV2Command)({ Bucket: this.bucket, Prefix: base || undefined, ContinuationToken: token }));
      const keys = (page.Contents ?? []).map((o) => (o.Key ?? '').slice(base.length)).filter(isValidKey);
      await this.index.recordMany(keys);
      recorded += keys.length;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    await this.index.markComplete();
    this.complete = true;
    return recorded;
  }

  /** Set in redirect delivery (MEDIA_DELIVERY=redirect): a presigned GET URL of the file. */
  deliveryUrl?: (key: string) => Promise<string>;

  presign(key: string, seconds: number): Promise<string> {
    return presigner().getSignedUrl(this.client, new (sdk().GetObjectCommand)({ Bucket: this.bucket, Key: this.objectKey(key) }), { expiresIn: seconds });
  }
}
