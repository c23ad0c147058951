import type { Readable } from 'node:stream';
import { contentTypeOf } from './content-types.ts';
import type { ByteRange, FileStore, StoredFile } from './file-store.ts';

/** A stored file the domain decided may be served: its facts, and how to read it (whole or one range). */
export interface ServedFile {
  size: number;
  modifiedMs: number;
  contentType: string;
  /** How long a client may keep it. */
  maxAgeSeconds: number;
  open(range?: ByteRange): Promise<Readable>;
  /** With redirect delivery: where the client reads the file instead (the store's presigned URL). */
  redirect?: () => Promise<string>;
}

export function servedFile(store: FileStore, key: string, stat: StoredFile, maxAgeSeconds: number): ServedFile {
  return {
    size: stat.size,
    modifiedMs: stat.modifiedMs,
    contentType: contentTypeOf(key),
    maxAgeSeconds: Math.max(0, maxAgeSeconds),
    open: (range) => store.createReadStream(key, range),
    // Playlists are answered here even with redirect delivery: their relative URIs must resolve against
    // Reelbase's address (which carries the link's token or grant), not the presigned one.
    ...(store.deliveryUrl && !key.endsWith('.m3u8') ? { redirect: () => store.deliveryUrl!(key) } : {}),
  };
}
