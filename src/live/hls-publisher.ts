import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { FileStore } from '../media/file-store.ts';
import { writePartIndex } from './hls-index.ts';
import { parseMediaPlaylist, type Segment } from './hls-playlist.ts';
import { SEGMENT_NAME, segmentKey } from './paths.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface PublisherLog {
  warn(obj: object, msg: string): void;
}

/**
 * Publishes one part of a broadcast from the packager's local folder to the file store while ffmpeg
 * writes it. ffmpeg renames a segment into place when it is complete, then renames its playlist
 * naming it into place; the publisher follows that playlist (inotify, and a check every second in
 * case an event is lost), stores each new segment under `live/<uuid>/<part>/<segment>` (a rename
 * into the local store, an upload to an object store; the local file goes either way) and only then
 * the part's index naming it (src/live/hls-index.ts). A reader on any process therefore never finds
 * a listed segment it cannot read. When the part ends its local folder is removed.
 */
export class PartPublisher {
  private watcher: fs.FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private queued = false;
  /** Abandoned: nothing more is published. */
  private stopped = false;
  /** Entries of ffmpeg's playlist handled so far (stored, or skipped when their file is gone). */
  private taken = 0;
  private readonly listed: Segment[] = [];
  private ended = false;
  /** The index in the store is behind `listed`/`ended`. */
  private indexBehind = true;
  /** The playlist file as last read (inode, size, mtime): unchanged means nothing to do. */
  private seen = '';
  private failures = 0;

  constructor(
    private readonly store: FileStore,
    readonly playerUuid: string,
    readonly part: string,
    /** The packager's local folder of this part (ffmpeg's playlist `index.m3u8` and segments). */
    readonly dir: string,
    private readonly log?: PublisherLog,
  ) {}

  private get playlistFile() {
    return path.join(this.dir, 'index.m3u8');
  }

  /**
   * Starts following the local folder (which must exist) and stores the part's empty index, which
   * reserves the part's name: readers and a later ingest count parts from the store.
   */
  start(): void {
    try {
      this.watcher = fs.watch(this.dir, (_event, name) => {
        // The playlist naming a new segment, or a segment renamed into place (should a playlist name it first).
        if (name === 'index.m3u8' || (name && SEGMENT_NAME.test(name))) void this.schedule();
      });
      this.watcher.on('error', () => this.stopWatching(false));
    } catch (err) {
      this.log?.warn({ err: (err as Error).message, dir: this.dir }, 'live: cannot watch the packager output; checking it every second');
    }
    this.timer = setInterval(() => void this.schedule(), 1000);
    this.timer.unref();
    void this.schedule();
  }

  private stopWatching(all = true) {
    this.watcher?.close();
    this.watcher = null;
    if (all && this.timer) clearInterval(this.timer);
    if (all) this.timer = null;
  }

  /** One pass at a time; events arriving during a pass make exactly one more. */
  private schedule(final = false): Promise<void> {
    if (this.queued && !final) return this.chain;
    this.queued = true;
    this.chain = this.chain.then(async () => {
      this.queued = false;
      try {
        await this.publish(final);
      } catch (err) {
        this.failures++;
        // Retried with the next event or check; one line per ten failures is enough.
        if (this.failures % 10 === 1)
          this.log?.warn({ err: (err as Error).message, part: this.part, uuid: this.playerUuid }, 'live: could not publish HLS output');
      }
    });
    return this.chain;
  }

  private async publish(final: boolean) {
    if (this.stopped) return;
    const stat = await fsp.stat(this.playlistFile).catch(() => null);
    const seen = stat ? `${stat.ino}:${stat.size}:${stat.mtimeMs}` : '';
    if (stat && (seen !== this.seen || final)) {
      const text = await fsp.readFile(this.playlistFile, 'utf8').catch(() => null);
      if (text !== null) {
        try {
          if (await this.storeSegments(parseMediaPlaylist(text), final)) this.seen = seen;
        } finally {
          // Whatever was stored is listed, even when a later segment failed.
          if (this.indexBehind && !this.stopped) await this.writeIndex();
        }
        return;
      }
    }
    if (this.indexBehind && !this.stopped) await this.writeIndex();
  }

  /** Stores the segments the playlist names beyond those handled; false when some must wait for the next pass. */
  private async storeSegments({ segments, ended }: { segments: Segment[]; ended: boolean }, final: boolean): Promise<boolean> {
    while (this.taken < segments.length) {
      if (this.stopped) return false;
      const segment = segments[this.taken];
      // ffmpeg names every segment so; anything else is a playlist read while being written.
      if (!SEGMENT_NAME.test(segment.uri)) return false;
      const file = path.join(this.dir, segment.uri);
      try {
        await this.store.put(segmentKey(this.playerUuid, this.part, segment.uri), file);
        this.listed.push(segment);
        this.indexBehind = true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || fs.existsSync(file)) throw err;
        // Not renamed into place yet: the next pass takes it. Once ffmpeg has exited, it never will be: left out.
        if (!final) return false;
      }
      this.taken++;
    }
    if (ended && !this.ended) {
      this.ended = true;
      this.indexBehind = true;
    }
    return true;
  }

  private async writeIndex() {
    // Passes run one at a time: nothing changes `listed` meanwhile.
    await writePartIndex(this.store, this.playerUuid, this.part, { segments: this.listed, ended: this.ended });
    this.indexBehind = false;
  }

  /**
   * ffmpeg has exited: its last segment and the closed playlist are published (a few tries when the
   * store fails), then the local folder is removed.
   */
  async finish(): Promise<void> {
    this.stopWatching();
    for (let attempt = 0; attempt < 3; attempt++) {
      const failuresBefore = this.failures;
      await this.schedule(true);
      if (this.failures === failuresBefore || this.stopped) break;
      await sleep(500 * (attempt + 1));
    }
    await this.removeLocal();
  }

  /** Stops at once (the broadcast was deleted or taken over): nothing more is published. */
  async abandon(): Promise<void> {
    this.stopped = true;
    this.stopWatching();
    await this.chain;
    await this.removeLocal();
  }

  private async removeLocal() {
    await fsp.rm(this.dir, { recursive: true, force: true }).catch(() => {});
    // The broadcast's folder too, once its last part is gone.
    await fsp.rmdir(path.dirname(this.dir)).catch(() => {});
  }
}
