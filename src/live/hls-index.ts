import { putSmall, readSmall, type FileStore } from '../media/file-store.ts';
import type { PartPlaylist, Segment } from './hls-playlist.ts';
import { partIndexKey, partName, SEGMENT_NAME } from './paths.ts';

/**
 * The published state of a broadcast's parts in the file store: per part an `index.json` naming the
 * segments stored so far (in order, with their durations) and whether the part ended. The publisher
 * writes a part's index only after the segments it names are stored, so whatever a reader finds
 * listed it can read, from any process sharing the store. Parts are numbered from p0001 without gaps
 * (a part's empty index is stored when it starts), so readers find them by counting up.
 */
export interface PartIndex {
  segments: Segment[];
  ended: boolean;
}

export async function writePartIndex(store: FileStore, playerUuid: string, part: string, index: PartIndex): Promise<void> {
  const body = Buffer.from(JSON.stringify({ segments: index.segments, ended: index.ended }));
  await putSmall(store, partIndexKey(playerUuid, part), body);
}

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';

/** Keeps what a reader can trust: segment names of the packager, finite durations. */
function parseIndex(text: string): PartIndex {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { segments: [], ended: false };
  }
  const value = (raw ?? {}) as { segments?: unknown; ended?: unknown };
  const segments: Segment[] = [];
  for (const s of Array.isArray(value.segments) ? (value.segments as Array<Partial<Segment>>) : []) {
    if (typeof s?.uri !== 'string' || !SEGMENT_NAME.test(s.uri) || typeof s.duration !== 'number' || !Number.isFinite(s.duration)) continue;
    segments.push({ duration: s.duration, uri: s.uri, ...(typeof s.programDateTime === 'string' ? { programDateTime: s.programDateTime } : {}) });
  }
  return { segments, ended: value.ended === true };
}

/** One part's published index; null when the part does not exist (yet). */
export async function readPart(store: FileStore, playerUuid: string, name: string): Promise<PartPlaylist | null> {
  let body: Buffer;
  try {
    body = await readSmall(store, partIndexKey(playerUuid, name));
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
  return { name, ...parseIndex(body.toString('utf8')) };
}

/**
 * Ended parts never change again: a reader keeps them (per player uuid and part) and reads only the
 * part still being written, and the next one to see whether it began.
 */
export class EndedParts {
  private readonly parts = new Map<string, PartPlaylist>();

  constructor(private readonly max = 2000) {}

  get(playerUuid: string, name: string): PartPlaylist | undefined {
    return this.parts.get(`${playerUuid}/${name}`);
  }

  remember(playerUuid: string, part: PartPlaylist): void {
    if (!part.ended) return;
    const key = `${playerUuid}/${part.name}`;
    if (this.parts.has(key)) return;
    this.parts.set(key, part);
    if (this.parts.size > this.max) this.parts.delete(this.parts.keys().next().value!);
  }
}

/** Every published part of the broadcast, in order (a part started but without segments yet is empty). */
export async function readParts(store: FileStore, playerUuid: string, ended?: EndedParts): Promise<PartPlaylist[]> {
  const read = (n: number): Promise<PartPlaylist | null> => {
    const name = partName(n);
    const known = ended?.get(playerUuid, name);
    return known ? Promise.resolve(known) : readPart(store, playerUuid, name);
  };
  const parts: PartPlaylist[] = [];
  let current = read(1);
  for (let n = 1; ; n++) {
    // The next part is asked for meanwhile: one round trip to an object store, not two.
    const next = read(n + 1);
    let part: PartPlaylist | null;
    try {
      part = await current;
    } catch (err) {
      next.catch(() => {});
      throw err;
    }
    if (!part) {
      next.catch(() => {});
      return parts;
    }
    ended?.remember(playerUuid, part);
    parts.push(part);
    current = next;
  }
}

/** How many parts the broadcast has in the store (a continued broadcast's next part comes after them). */
export async function countParts(store: FileStore, playerUuid: string): Promise<number> {
  let n = 0;
  while (await store.stat(partIndexKey(playerUuid, partName(n + 1)))) n++;
  return n;
}
