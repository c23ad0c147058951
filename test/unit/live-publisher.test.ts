import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { countParts, EndedParts, readPart, readParts, writePartIndex } from '../../src/live/hls-index.ts';
import { PartPublisher } from '../../src/live/hls-publisher.ts';
import { partIndexKey, segmentKey } from '../../src/live/paths.ts';
import { LocalFileStore, type ByteRange, type FileStore, type StoredFile } from '../../src/media/file-store.ts';

const UUID = '0f9b6c1e-1111-4222-8333-444455556666';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A local store whose segment writes are slow, recording what was stored when each index was written. */
class SlowStore implements FileStore {
  readonly inner: LocalFileStore;
  readonly stored = new Set<string>();
  readonly violations: string[] = [];
  readonly indexes: Array<{ segments: Array<{ uri: string }>; ended: boolean }> = [];
  puts = 0;

  constructor(root: string) {
    this.inner = new LocalFileStore(root);
  }

  async put(key: string, from: string | Readable): Promise<StoredFile> {
    this.puts++;
    if (key.endsWith('.ts')) {
      await sleep(40);
      const stored = await this.inner.put(key, from);
      this.stored.add(key);
      return stored;
    }
    const stored = await this.inner.put(key, from);
    const index = JSON.parse(await text(await this.inner.createReadStream(key))) as { segments: Array<{ uri: string }>; ended: boolean };
    for (const s of index.segments) if (!this.stored.has(segmentKey(UUID, 'p0001', s.uri))) this.violations.push(s.uri);
    this.indexes.push(index);
    return stored;
  }

  createReadStream(key: string, range?: ByteRange) {
    return this.inner.createReadStream(key, range);
  }

  stat(key: string) {
    return this.inner.stat(key);
  }

  delete(prefix: string) {
    return this.inner.delete(prefix);
  }
}

/** Writes as ffmpeg's HLS muxer does: a segment renamed into place, then the playlist naming it. */
function ffmpegWrites(dir: string, count: number, ended = false) {
  for (let i = count - 1; i < count; i++) {
    const name = `s${String(i).padStart(5, '0')}.ts`;
    fs.writeFileSync(path.join(dir, `${name}.tmp`), `segment ${i}`);
    fs.renameSync(path.join(dir, `${name}.tmp`), path.join(dir, name));
  }
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-TARGETDURATION:1'];
  for (let i = 0; i < count; i++) lines.push('#EXT-X-PROGRAM-DATE-TIME:2030-01-01T00:00:00.000+0000', `#EXTINF:1.0${i},`, `s${String(i).padStart(5, '0')}.ts`);
  if (ended) lines.push('#EXT-X-ENDLIST');
  fs.writeFileSync(path.join(dir, 'index.m3u8.tmp'), `${lines.join('\n')}\n`);
  fs.renameSync(path.join(dir, 'index.m3u8.tmp'), path.join(dir, 'index.m3u8'));
}

describe('publishing a live part to the file store', () => {
  let root: string;
  let dir: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-publisher-'));
    dir = path.join(root, '.work', 'live', UUID, 'p0001');
    fs.mkdirSync(dir, { recursive: true });
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('stores every segment before the index that names it, reserves the part at once, ends it and removes the local files', async () => {
    const store = new SlowStore(root);
    const publisher = new PartPublisher(store, UUID, 'p0001', dir);
    publisher.start();
    // The part exists (empty) before its first segment: the next part is numbered after it.
    // (Waited for rather than slept on: a loaded machine takes longer than a quiet one.)
    await vi.waitFor(async () => expect(await readPart(store, UUID, 'p0001')).toEqual({ name: 'p0001', segments: [], ended: false }), { timeout: 5000 });
    expect(await countParts(store, UUID)).toBe(1);
    // Segments come faster than they are stored: several playlist changes during one upload.
    for (let n = 1; n <= 6; n++) {
      ffmpegWrites(dir, n);
      await sleep(15);
    }
    await vi.waitFor(
      async () =>
        expect((await readPart(store, UUID, 'p0001'))?.segments.map((s) => s.uri)).toEqual([
          's00000.ts',
          's00001.ts',
          's00002.ts',
          's00003.ts',
          's00004.ts',
          's00005.ts',
        ]),
      { timeout: 5000 },
    );
    const live = await readPart(store, UUID, 'p0001');
    expect(live?.segments[1]).toEqual({ uri: 's00001.ts', duration: 1.01, programDateTime: '2030-01-01T00:00:00.000+0000' });
    expect(live?.ended).toBe(false);
    // The segment is taken from the packager's folder as soon as it is stored.
    expect(fs.existsSync(path.join(dir, 's00000.ts'))).toBe(false);

    ffmpegWrites(dir, 7, true);
    await publisher.finish();
    const done = await readPart(store, UUID, 'p0001');
    expect(done?.segments).toHaveLength(7);
    expect(done?.ended).toBe(true);
    expect(store.violations).toEqual([]);
    expect(store.indexes.length).toBeGreaterThan(1);
    expect(await text(await store.createReadStream(segmentKey(UUID, 'p0001', 's00006.ts')))).toBe('segment 6');
    expect(fs.existsSync(dir)).toBe(false);
    expect(fs.existsSync(path.dirname(dir))).toBe(false);
  });

  it('waits for a named segment to be in place; once ffmpeg has exited, one that never came is left out', async () => {
    const store = new SlowStore(root);
    const publisher = new PartPublisher(store, UUID, 'p0001', dir);
    publisher.start();
    fs.writeFileSync(path.join(dir, 's00000.ts.tmp'), 'segment 0');
    const playlist = (count: number, ended: boolean) =>
      fs.writeFileSync(
        path.join(dir, 'index.m3u8'),
        ['#EXTM3U', ...Array.from({ length: count }, (_, i) => `#EXTINF:1.0,\ns0000${i}.ts`), ...(ended ? ['#EXT-X-ENDLIST'] : []), ''].join('\n'),
      );
    playlist(1, false);
    await sleep(200);
    expect((await readPart(store, UUID, 'p0001'))?.segments).toEqual([]);
    fs.renameSync(path.join(dir, 's00000.ts.tmp'), path.join(dir, 's00000.ts'));
    await vi.waitFor(async () => expect((await readPart(store, UUID, 'p0001'))?.segments.map((s) => s.uri)).toEqual(['s00000.ts']), { timeout: 5000 });
    playlist(2, true);
    await publisher.finish();
    expect(await readPart(store, UUID, 'p0001')).toMatchObject({ segments: [{ uri: 's00000.ts' }], ended: true });
    expect(store.violations).toEqual([]);
  });

  it('publishes nothing more once abandoned', async () => {
    const store = new SlowStore(root);
    const publisher = new PartPublisher(store, UUID, 'p0001', dir);
    publisher.start();
    ffmpegWrites(dir, 1);
    await vi.waitFor(async () => expect((await readPart(store, UUID, 'p0001'))?.segments).toHaveLength(1), { timeout: 5000 });
    await publisher.abandon();
    const puts = store.puts;
    expect(fs.existsSync(dir)).toBe(false);
    fs.mkdirSync(dir, { recursive: true });
    ffmpegWrites(dir, 2);
    await sleep(1300);
    expect(store.puts).toBe(puts);
    expect((await readPart(store, UUID, 'p0001'))?.segments.map((s) => s.uri)).toEqual(['s00000.ts']);
  });
});

describe('reading the published parts', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-parts-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('reads the parts in order up to the first missing one, keeps ended parts, and drops what is not a segment', async () => {
    const store = new LocalFileStore(root);
    expect(await readParts(store, UUID)).toEqual([]);
    expect(await countParts(store, UUID)).toBe(0);
    await writePartIndex(store, UUID, 'p0001', { segments: [{ uri: 's00000.ts', duration: 4 }], ended: true });
    await writePartIndex(store, UUID, 'p0002', { segments: [{ uri: 's00000.ts', duration: 2.5 }], ended: false });
    await writePartIndex(store, UUID, 'p0004', { segments: [{ uri: 's00000.ts', duration: 1 }], ended: false });
    const ended = new EndedParts();
    const parts = await readParts(store, UUID, ended);
    expect(parts.map((p) => [p.name, p.segments.length, p.ended])).toEqual([
      ['p0001', 1, true],
      ['p0002', 1, false],
    ]);
    expect(await countParts(store, UUID)).toBe(2);

    // An ended part is not read again; an open one is.
    await writePartIndex(store, UUID, 'p0001', { segments: [], ended: true });
    await writePartIndex(store, UUID, 'p0002', {
      segments: [
        { uri: 's00000.ts', duration: 2.5 },
        { uri: 's00001.ts', duration: 2.5 },
      ],
      ended: false,
    });
    const again = await readParts(store, UUID, ended);
    expect(again.map((p) => p.segments.length)).toEqual([1, 2]);

    fs.writeFileSync(
      path.join(root, ...partIndexKey(UUID, 'p0002').split('/')),
      '{"segments":[{"uri":"../x.ts","duration":1},{"uri":"s00001.ts","duration":"1"}',
    );
    expect((await readPart(store, UUID, 'p0002'))?.segments).toEqual([]);
    await writePartIndex(store, UUID, 'p0002', {
      segments: [
        { uri: '../../etc/passwd', duration: 1 },
        { uri: 's00001.ts', duration: 1 },
      ],
      ended: false,
    });
    expect((await readPart(store, UUID, 'p0002'))?.segments.map((s) => s.uri)).toEqual(['s00001.ts']);
  });
});
