import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { AppError, invalidField, notFound } from '../../lib/errors.ts';
import type { Listing, Page } from '../../lib/paging.ts';
import { nowSeconds } from '../../lib/time.ts';
import { type TagsRepository, type Owner, type TagRow } from './tags.repository.ts';
import { MAX_TAGS_PER_RECORD, TAG_NAME_MAX, type CreateTagBody, type DeleteTagsInput, type Tag, type TagListQuery } from './tags.schemas.ts';

const unique = <T>(xs: T[]) => [...new Set(xs)];

/** Names sort case-insensitively, ties by code point: the same order on every database. */
export function compareNames(a: string, b: string): number {
  const la = a.toLowerCase();
  const lb = b.toLowerCase();
  if (la !== lb) return la < lb ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Lone UTF-16 surrogates become U+FFFD, as both databases would store them: the same name everywhere. */
const wellFormed = (s: string) => s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

/** Trimmed, non-empty, at most 255 characters; `field` names the input in a 422. */
function cleanName(raw: string, field: string): string {
  const name = wellFormed(raw).trim();
  if (!name) throw invalidField(field, 'must not be blank');
  if (name.length > TAG_NAME_MAX) throw invalidField(field, `must be at most ${TAG_NAME_MAX} characters`);
  return name;
}

export class TagsService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly repo: TagsRepository,
  ) {}

  private async toWire(rows: TagRow[], repo = this.repo): Promise<Tag[]> {
    const ids = rows.map((r) => r.id);
    const [videos, players] = await Promise.all([repo.videoIdsOf(ids), repo.playerIdsOf(ids)]);
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      video_ids: videos.get(r.id) ?? [],
      player_ids: players.get(r.id) ?? [],
      created_at: Number(r.created_at),
    }));
  }

  /** Ids that are not the organization's records answer a 422 naming the field (another organization's look missing). */
  private async checkOwners(repo: TagsRepository, owner: Owner, organizationId: number, ids: number[], field: string) {
    const found = await repo.existingOwnerIds(owner, organizationId, ids);
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) throw invalidField(field, `contains ids of no ${owner}: ${missing.slice(0, 20).join(', ')}`);
  }

  /** Creates a tag; a name the organization already uses is a 422 (`name` has already been taken). */
  async create(organizationId: number, body: CreateTagBody): Promise<Tag> {
    const name = cleanName(body.name, 'name');
    const videoIds = unique(body.video_ids ?? []);
    const playerIds = unique(body.player_ids ?? []);
    const row = await this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      await this.checkOwners(repo, 'video', organizationId, videoIds, 'video_ids');
      await this.checkOwners(repo, 'player', organizationId, playerIds, 'player_ids');
      const now = nowSeconds();
      const inserted = await repo.insertIfAbsent({ organization_id: organizationId, name, created_at: now, updated_at: now });
      if (!inserted) throw invalidField('name', 'has already been taken');
      await repo.link(
        'video',
        videoIds.map((ownerId) => ({ ownerId, tagId: inserted.id })),
      );
      await repo.link(
        'player',
        playerIds.map((ownerId) => ({ ownerId, tagId: inserted.id })),
      );
      return inserted;
    });
    return (await this.toWire([row]))[0];
  }

  async get(organizationId: number, id: number): Promise<Tag> {
    const row = await this.repo.find(organizationId, id);
    if (!row) throw notFound('tag', id);
    return (await this.toWire([row]))[0];
  }

  /** Ordered by id. */
  async list(organizationId: number, query: TagListQuery, page: Page): Promise<Listing<Tag>> {
    const search = query.query?.trim() || undefined;
    // The count first: with it, a page in the later half is read from the end.
    const counted = page.paged ? await this.repo.count(organizationId, search) : undefined;
    const rows = await this.repo.list(organizationId, { limit: page.limit, offset: page.offset, query: search }, counted);
    const tags = await this.toWire(rows);
    return { items: tags, total: counted ?? tags.length };
  }

  async names(organizationId: number, prefix?: string): Promise<string[]> {
    const names = await this.repo.names(organizationId, prefix?.trim() || undefined);
    return unique(names).sort(compareNames);
  }

  /**
   * Deletes the tags named by `name`/`names` and/or `id`/`ids` (query and body merged); answers the
   * deleted tags as they were. Unknown names and ids are ignored; 404 when nothing matched.
   */
  async delete(organizationId: number, input: DeleteTagsInput): Promise<Tag[]> {
    const names = unique([...(input.name !== undefined ? [input.name] : []), ...(input.names ?? [])].map((n) => wellFormed(n).trim()).filter(Boolean));
    const ids = unique([...(input.id !== undefined ? [input.id] : []), ...(input.ids ?? [])]);
    if (names.length === 0 && ids.length === 0) throw invalidField('name', 'or id is required');
    return this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      const byId = await repo.findByIds(organizationId, ids);
      const byName = await repo.findByNames(organizationId, names);
      const rows = [...new Map([...byId, ...byName].map((r) => [r.id, r])).values()].sort((a, b) => a.id - b.id);
      if (rows.length === 0) throw new AppError('not_found', '404: No tag exists with that name or id');
      const wire = await this.toWire(rows, repo);
      await repo.deleteByIds(
        organizationId,
        rows.map((r) => r.id),
      );
      return wire;
    });
  }

  private async requireOwner(repo: TagsRepository, owner: Owner, organizationId: number, ownerId: number) {
    const found = await repo.existingOwnerIds(owner, organizationId, [ownerId]);
    if (!found.has(ownerId)) throw notFound(owner, ownerId);
  }

  /** The tags of a player (or video), ordered by id. */
  async tagsOf(owner: Owner, organizationId: number, ownerId: number): Promise<Tag[]> {
    await this.requireOwner(this.repo, owner, organizationId, ownerId);
    return this.toWire(await this.repo.tagsOf(owner, ownerId));
  }

  /**
   * Replaces the tags of a player (or video) by these names, creating the organization's missing tags;
   * answers the new set. Tags left without records are kept (delete them with DELETE /v1/tags).
   */
  async setTags(owner: Owner, organizationId: number, ownerId: number, input: string[] | string): Promise<Tag[]> {
    const raw = typeof input === 'string' ? input.split(',').filter((s) => s.trim() !== '') : input;
    const names = unique(raw.map((n, i) => cleanName(n, typeof input === 'string' ? 'tags' : `tags.${i}`)));
    if (names.length > MAX_TAGS_PER_RECORD) throw invalidField('tags', `must have at most ${MAX_TAGS_PER_RECORD} names`);
    const rows = await this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      await this.requireOwner(repo, owner, organizationId, ownerId);
      const now = nowSeconds();
      const existing = new Set((await repo.findByNames(organizationId, names)).map((r) => r.name));
      // Created in a fixed order so that concurrent requests lock new names in the same order (no deadlock).
      for (const name of [...names].sort()) {
        if (!existing.has(name)) await repo.insertIfAbsent({ organization_id: organizationId, name, created_at: now, updated_at: now });
      }
      const tags = await repo.findByNames(organizationId, names);
      const tagIds = tags.map((t) => t.id);
      await repo.unlinkAllExcept(owner, ownerId, tagIds);
      await repo.link(
        owner,
        tagIds.map((tagId) => ({ ownerId, tagId })),
      );
      return repo.tagsOf(owner, ownerId);
    });
    return this.toWire(rows);
  }
}
