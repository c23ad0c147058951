import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { writePartIndex } from '../../src/live/hls-index.ts';
import { parseMediaPlaylist } from '../../src/live/hls-playlist.ts';
import { segmentKey } from '../../src/live/paths.ts';
import type { FileStore } from '../../src/media/file-store.ts';

/**
 * A broadcast's part as the ingest publishes it into the file store (src/live/hls-publisher.ts): the
 * segments first, then the part's index naming them.
 */
export async function publishPart(
  store: FileStore,
  playerUuid: string,
  part: string,
  segments: Array<{ uri: string; duration: number; body: string | Buffer }>,
  ended = false,
): Promise<void> {
  for (const s of segments) await store.put(segmentKey(playerUuid, part, s.uri), Readable.from([Buffer.from(s.body)]));
  await writePartIndex(store, playerUuid, part, { segments: segments.map(({ uri, duration }) => ({ uri, duration })), ended });
}

/** Publishes an HLS folder ffmpeg wrote (`index.m3u8` and its `s%05d.ts` segments) as a part. */
export async function publishHlsFolder(store: FileStore, playerUuid: string, part: string, dir: string): Promise<void> {
  const { segments, ended } = parseMediaPlaylist(fs.readFileSync(path.join(dir, 'index.m3u8'), 'utf8'));
  await publishPart(
    store,
    playerUuid,
    part,
    segments.map((s) => ({ uri: s.uri, duration: s.duration, body: fs.readFileSync(path.join(dir, s.uri)) })),
    ended,
  );
}
