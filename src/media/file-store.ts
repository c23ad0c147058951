import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** What is known of a stored file. */
export interface StoredFile {
  size: number;
  modifiedMs: number;
}

/** Inclusive byte range, as in HTTP. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Where media files live. Keys are relative, `/`-separated paths of safe characters
 * (`videos/<uuid>/<set>/hd.mp4`); modules only ever see keys, so that an object store can replace
 * the local directory without touching them.
 */
export interface FileStore {
  /**
   * Stores a file under `key`, replacing any previous one; readers see either the old or the new
   * file, never a partial one. A path source is taken over (it may be moved).
   */
  put(key: string, from: string | Readable): Promise<StoredFile>;
  /** The file's bytes, or the inclusive `range` of them. A missing file fails with code ENOENT (here or on the stream). */
  createReadStream(key: string, range?: ByteRange): Promise<Readable>;
  /** null when there is no such file. */
  stat(key: string): Promise<StoredFile | null>;
  /** Removes the key and everything under `prefix/` (a file set, a video's folder). Missing is fine. */
  delete(prefix: string): Promise<void>;
  /** Only where files are delivered by redirect (MEDIA_DELIVERY=redirect): a short-lived URL of the file at its store. */
  deliveryUrl?: (key: string) => Promise<string>;
}

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A key is 1..16 segments of [A-Za-z0-9._-], none starting with a dot: no `..`, no absolute paths. */
/** Stores a small file held in memory (a playlist index, a caption). */
export function putSmall(store: FileStore, key: string, body: Buffer | string): Promise<StoredFile> {
  return store.put(key, Readable.from([typeof body === 'string' ? Buffer.from(body, 'utf8') : body]));
}

/** A small file's whole content, read through the store (it throws ENOENT when there is none). */
export async function readSmall(store: FileStore, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.createReadStream(key)) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks);
}

export function isValidKey(key: string): boolean {
  if (key.length === 0 || key.length > 1024) return false;
  const segments = key.split('/');
  return segments.length <= 16 && segments.every((s) => SEGMENT.test(s));
}

export class InvalidKeyError extends Error {
  readonly code = 'EINVALIDKEY';
}

/** The local-directory store: keys are paths under `root` (DATA_DIR/media or MEDIA_DIR). */
export class LocalFileStore implements FileStore {
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  private pathOf(key: string): string {
    const clean = key.replace(/\/+$/, '');
    if (!isValidKey(clean)) throw new InvalidKeyError(`Invalid media key: ${JSON.stringify(key)}`);
    return path.join(this.root, ...clean.split('/'));
  }

  private async statPath(file: string): Promise<StoredFile> {
    const s = await fsp.stat(file);
    return { size: s.size, modifiedMs: Math.floor(s.mtimeMs) };
  }

  async put(key: string, from: string | Readable): Promise<StoredFile> {
    const target = this.pathOf(key);
    const staging = `${target}.${randomBytes(6).toString('hex')}.partial`;
    // Two tries: a concurrent delete() may prune the freshly made folder in between.
    for (let attempt = 0; ; attempt++) {
      await fsp.mkdir(path.dirname(target), { recursive: true });
      try {
        if (typeof from === 'string') {
          try {
            await fsp.rename(from, target);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
            // Another file system: copy beside the target, then rename into place.
            await fsp.copyFile(from, staging);
            await fsp.rename(staging, target);
            await fsp.rm(from, { force: true });
          }
        } else {
          await pipeline(from, fs.createWriteStream(staging));
          await fsp.rename(staging, target);
        }
        return await this.statPath(target);
      } catch (err) {
        await fsp.rm(staging, { force: true }).catch(() => {});
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' && attempt === 0 && typeof from === 'string' && fs.existsSync(from)) continue;
        throw err;
      }
    }
  }

  async createReadStream(key: string, range?: ByteRange): Promise<Readable> {
    // Opened lazily by the stream: a missing file errors the stream with ENOENT.
    return fs.createReadStream(this.pathOf(key), range ? { start: range.start, end: range.end } : {});
  }

  async stat(key: string): Promise<StoredFile | null> {
    try {
      const file = this.pathOf(key);
      const s = await fsp.stat(file);
      return s.isFile() ? { size: s.size, modifiedMs: Math.floor(s.mtimeMs) } : null;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR' || err instanceof InvalidKeyError) return null;
      throw err;
    }
  }

  async delete(prefix: string): Promise<void> {
    const target = this.pathOf(prefix);
    await fsp.rm(target, { recursive: true, force: true });
    // Prune the folders this left empty, up to the root.
    let dir = path.dirname(target);
    while (dir.startsWith(this.root + path.sep)) {
      try {
        await fsp.rmdir(dir);
      } catch {
        break; // not empty (or already gone)
      }
      dir = path.dirname(dir);
    }
  }
}
