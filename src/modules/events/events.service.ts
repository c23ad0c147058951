import { invalidField, notFound } from '../../lib/errors.ts';
import type { Page } from '../../lib/paging.ts';
import { nowSeconds } from '../../lib/time.ts';
import { viewOf } from '../../db/read-cache.ts';
import { mapMaybe, type MaybePromise } from '../../lib/maybe-promise.ts';
import { assertOwnOrganization } from '../organizations/own-organization.ts';
import { type EventsRepository, type ChapterOwner, type EventFilter, type EventPatch, type EventRow } from './events.repository.ts';
import {
  EVENT_TYPES,
  INT4_MAX,
  MAX_CTA_WIDTH,
  type Event,
  type EventCreateBody,
  type EventDuplicateBody,
  type EventUpdateBody,
  type OrgEventCreateBody,
  type OrgEventUpdateBody,
  type PlayerEventCreateBody,
} from './events.schemas.ts';

/** A player named by id (`/players/:id`) or by uuid (`/players/uuid=:uuid`). */
export type PlayerRef = { id: number } | { uuid: string };

export interface PlayerSummary {
  id: number;
  uuid: string;
}

/** The timing rule of CTAs and events: an event that closes by itself needs to know when. */
export function checkTiming(autoClose: boolean, duration: number | null): void {
  if (autoClose && duration === null) throw invalidField('duration', 'is required when auto_close is true');
}

export function toEvent(row: EventRow): Event {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    event_type: row.event_type,
    html: row.html,
    closeable: Boolean(row.closeable),
    fullscreen: Boolean(row.fullscreen),
    background_color: row.background_color,
    annotation_css: row.annotation_css,
    blur: Boolean(row.blur),
    state: row.state,
    chapter_id: row.chapter_id,
    second: row.second,
    duration: row.duration,
    auto_close: Boolean(row.auto_close),
    width: row.width,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

const toOrgEvent = (row: EventRow) => ({ event_id: row.id, second: row.second, duration: row.duration, event: toEvent(row) });

/** The optional attributes of an event body that map one-to-one onto columns. */
function contentOf(input: EventUpdateBody): EventPatch {
  const out: EventPatch = {};
  const keys = [
    'name',
    'description',
    'event_type',
    'html',
    'closeable',
    'fullscreen',
    'background_color',
    'annotation_css',
    'blur',
    'state',
    'is_new_contact',
    'second',
    'duration',
    'auto_close',
    'width',
  ] as const;
  for (const key of keys) {
    if (input[key] !== undefined) (out as Record<string, unknown>)[key] = input[key];
  }
  return out;
}

/**
 * Events: the in-video interactions (CTAs are events of type simple_overlay/simple_email seen through
 * the CTA operations). An event sits on a chapter at a second, or is an organization default event
 * (chapter_id null) shown on every player.
 */
export class EventsService {
  constructor(
    private readonly listCap: number,
    readonly repo: EventsRepository,
  ) {}

  // ---- lookups ----

  /** The organization's event, or a 404; a cached one without a promise (read on every CTA/event GET). */
  find(organizationId: number, id: number): MaybePromise<EventRow> {
    return mapMaybe(this.repo.findById(organizationId, id), (row) => {
      if (!row) throw notFound('event', id);
      return row;
    });
  }

  /** A chapter of the organization; any other id (missing, another organization's, out of range) is a 404. */
  async resolveChapter(organizationId: number, chapterId: number): Promise<ChapterOwner> {
    const chapter =
      Number.isSafeInteger(chapterId) && chapterId >= 1 && chapterId <= INT4_MAX ? await this.repo.findChapter(organizationId, chapterId) : undefined;
    if (!chapter) throw notFound('chapter', chapterId);
    return chapter;
  }

  async resolvePlayer(organizationId: number, ref: PlayerRef): Promise<PlayerSummary> {
    const player = 'id' in ref ? await this.repo.findPlayerById(organizationId, ref.id) : await this.repo.findPlayerByUuid(organizationId, ref.uuid);
    if (!player) throw notFound('player', 'id' in ref ? ref.id : ref.uuid);
    return player;
  }

  /** A page and the exact count. A count without text is a sum of a few maintained rows, so it comes first and lets a deep page be walked to from the end. */
  async listRows(filter: EventFilter, page: Page): Promise<{ rows: EventRow[]; total: number }> {
    if (filter.text) {
      const [rows, total] = await Promise.all([this.repo.list(filter, page), this.repo.count(filter)]);
      return { rows, total };
    }
    // The first page carries its count (one statement); a later one is read from the nearer end, which the count tells.
    const first = page.offset === 0 ? await this.repo.firstPageCounted(filter, page.limit) : null;
    if (first) return first;
    const total = await this.repo.count(filter);
    return { rows: await this.repo.list(filter, page, total), total };
  }

  // ---- rows (shared with the CTA service) ----

  /** Inserts an event after the common checks; `chapter_id` must already be resolved. */
  async insertEvent(organizationId: number, input: EventUpdateBody & { event_type: string }, defaults: { auto_close: boolean }): Promise<EventRow> {
    const autoClose = input.auto_close ?? defaults.auto_close;
    const duration = input.duration ?? null;
    checkTiming(autoClose, duration);
    const now = nowSeconds();
    return this.repo.insert({
      organization_id: organizationId,
      chapter_id: input.chapter_id ?? null,
      event_type: input.event_type,
      name: input.name ?? null,
      description: input.description ?? null,
      second: input.second ?? 0,
      duration,
      auto_close: autoClose,
      width: input.width ?? null,
      html: input.html ?? '',
      closeable: input.closeable ?? true,
      fullscreen: input.fullscreen ?? false,
      background_color: input.background_color ?? null,
      annotation_css: input.annotation_css ?? null,
      blur: input.blur ?? false,
      is_new_contact: input.is_new_contact ?? false,
      state: input.state ?? 'public',
      created_at: now,
      updated_at: now,
    });
  }

  /** Applies a partial update; the timing rule is checked on the merged record. */
  async patchEvent(row: EventRow, input: EventUpdateBody): Promise<EventRow> {
    const patch = contentOf(input);
    if (input.chapter_id !== undefined) {
      if (input.chapter_id !== null) await this.resolveChapter(row.organization_id, input.chapter_id);
      patch.chapter_id = input.chapter_id;
    }
    const autoClose = input.auto_close ?? Boolean(row.auto_close);
    const duration = input.duration !== undefined ? input.duration : row.duration;
    checkTiming(autoClose, duration);
    return this.write(row.organization_id, row.id, patch);
  }

  /**
   * `patchEvent` of the organization's event `id`. The stored row is read first only when the body
   * names a chapter or one side of the timing rule (which is checked against the other side, and whose
   * errors come after the event's 404); any other body is one statement.
   */
  async patchById(organizationId: number, id: number, input: EventUpdateBody): Promise<EventRow> {
    if (input.chapter_id === undefined && input.auto_close === undefined && input.duration === undefined) {
      return this.write(organizationId, id, contentOf(input));
    }
    return this.patchEvent(await this.find(organizationId, id), input);
  }

  private async write(organizationId: number, id: number, patch: EventPatch): Promise<EventRow> {
    const updated = await this.repo.update(organizationId, id, patch, nowSeconds());
    if (!updated) throw notFound('event', id);
    return updated;
  }

  async removeRow(row: EventRow): Promise<EventRow> {
    const removed = await this.repo.remove(row.organization_id, row.id);
    if (!removed) throw notFound('event', row.id);
    return removed;
  }

  // ---- /v1/events ----

  async create(organizationId: number, input: EventCreateBody): Promise<Event> {
    if (input.chapter_id != null) await this.resolveChapter(organizationId, input.chapter_id);
    return toEvent(await this.insertEvent(organizationId, input, { auto_close: false }));
  }

  get(organizationId: number, id: number): MaybePromise<Event> {
    return mapMaybe(this.find(organizationId, id), (row) => viewOf(row, toEvent));
  }

  async update(organizationId: number, id: number, input: EventUpdateBody): Promise<Event> {
    return toEvent(await this.patchById(organizationId, id, input));
  }

  async remove(organizationId: number, id: number): Promise<Event> {
    return toEvent(await this.removeRow(await this.find(organizationId, id)));
  }

  async list(organizationId: number, query: { event_type?: string[]; state?: string; query?: string }, page: Page) {
    const { rows, total } = await this.listRows(
      { organizationId, eventTypes: query.event_type, state: query.state, text: query.query?.trim() || undefined },
      page,
    );
    return { items: rows.map(toEvent), total };
  }

  /** A copy of the event; it keeps the placement and content and starts as a draft unless told otherwise. */
  async duplicate(organizationId: number, id: number, overrides: EventDuplicateBody): Promise<Event> {
    const row = await this.find(organizationId, id);
    const chapterId = overrides.chapter_id !== undefined ? overrides.chapter_id : row.chapter_id;
    if (overrides.chapter_id != null) await this.resolveChapter(organizationId, overrides.chapter_id);
    const { id: _id, ...rest } = row;
    const now = nowSeconds();
    const copy = await this.repo.insert({
      ...rest,
      name: overrides.name !== undefined ? overrides.name : row.name === null ? null : `${row.name} (copy)`.slice(0, 255),
      state: overrides.state ?? 'draft',
      chapter_id: chapterId,
      second: overrides.second ?? row.second,
      auto_close: Boolean(row.auto_close),
      closeable: Boolean(row.closeable),
      fullscreen: Boolean(row.fullscreen),
      blur: Boolean(row.blur),
      is_new_contact: Boolean(row.is_new_contact),
      created_at: now,
      updated_at: now,
    });
    return toEvent(copy);
  }

  /** Where the event is shown: its chapter, player and video; a default event has none. */
  async ownerMeta(organizationId: number, id: number) {
    const row = await this.find(organizationId, id);
    const chapter = row.chapter_id === null ? undefined : await this.repo.findChapter(organizationId, row.chapter_id);
    return {
      event_id: row.id,
      is_default: row.chapter_id === null,
      chapter_id: row.chapter_id,
      player_id: chapter?.player_id ?? null,
      player_uuid: chapter?.player_uuid ?? null,
      video_id: chapter?.video_id ?? null,
      position: chapter?.position ?? null,
      second: row.second,
      duration: row.duration,
    };
  }

  // ---- /v1/players/uuid=:uuid/... ----

  /** The player's events (its chapters' events, plus the organization defaults unless excluded) with counts. */
  async playerEventMeta(organizationId: number, ref: PlayerRef, includeDefaults = true) {
    const player = await this.resolvePlayer(organizationId, ref);
    const filter: EventFilter = { organizationId, playerId: player.id, includeDefaults };
    const [rows, total, byState, byType, defaults] = await Promise.all([
      this.repo.list(filter, { limit: this.listCap, offset: 0 }),
      this.repo.count(filter),
      this.repo.countBy(filter, 'state'),
      this.repo.countBy(filter, 'event_type'),
      includeDefaults ? this.repo.count({ organizationId, defaultsOnly: true }) : Promise.resolve(0),
    ]);
    return {
      player_id: player.id,
      player_uuid: player.uuid,
      max_cta_width: MAX_CTA_WIDTH,
      num_events: total,
      num_public_events: byState.public ?? 0,
      num_draft_events: byState.draft ?? 0,
      num_default_events: defaults,
      event_types: Object.fromEntries(EVENT_TYPES.map((t) => [t, byType[t] ?? 0])) as Record<(typeof EVENT_TYPES)[number], number>,
      events: rows.map(toEvent),
    };
  }

  /** Adds an event to one of the player's chapters (default: its first chapter). */
  async addToPlayer(organizationId: number, ref: PlayerRef, input: PlayerEventCreateBody): Promise<Event> {
    const player = await this.resolvePlayer(organizationId, ref);
    let chapterId: number;
    if (input.chapter_id !== undefined) {
      const chapter = await this.resolveChapter(organizationId, input.chapter_id);
      if (chapter.player_id !== player.id) throw invalidField('chapter_id', 'is not a chapter of this player');
      chapterId = chapter.id;
    } else {
      const first = await this.repo.firstChapterOf(organizationId, player.id);
      if (!first) throw invalidField('chapter_id', 'is required: the player has no chapters');
      chapterId = first.id;
    }
    return toEvent(await this.insertEvent(organizationId, { ...input, chapter_id: chapterId }, { auto_close: false }));
  }

  // ---- /v1/organizations/:id/events (organization default events) ----

  /** The path's organization must be the token's; any other is answered like a missing one. */
  assertOrganization(pathId: number, organizationId: number): void {
    assertOwnOrganization(pathId, organizationId);
  }

  private async findDefault(organizationId: number, eventId: number): Promise<EventRow> {
    const row = await this.repo.findById(organizationId, eventId);
    if (!row || row.chapter_id !== null) throw notFound('default event', eventId);
    return row;
  }

  async listDefaults(organizationId: number, page: Page) {
    const rows = await this.repo.list({ organizationId, defaultsOnly: true }, page);
    return rows.map(toOrgEvent);
  }

  /** A new default event, or (with `event_id`) a default copy of an existing event with the given changes. */
  async createDefault(organizationId: number, input: OrgEventCreateBody) {
    const { event_id: sourceId, ...rest } = input;
    let base: EventUpdateBody & { event_type?: string } = {};
    if (sourceId !== undefined) {
      const source = await this.find(organizationId, sourceId);
      base = {
        name: source.name,
        description: source.description,
        event_type: source.event_type as EventUpdateBody['event_type'],
        html: source.html,
        closeable: Boolean(source.closeable),
        fullscreen: Boolean(source.fullscreen),
        background_color: source.background_color,
        annotation_css: source.annotation_css,
        blur: Boolean(source.blur),
        state: source.state as EventUpdateBody['state'],
        is_new_contact: Boolean(source.is_new_contact),
        second: source.second,
        duration: source.duration,
        auto_close: Boolean(source.auto_close),
        width: source.width,
      };
    }
    const merged = { ...base, ...contentOf(rest), chapter_id: null } as EventUpdateBody & { event_type?: string };
    if (merged.event_type === undefined) throw invalidField('event_type', 'is required (or give event_id to copy an event)');
    const row = await this.insertEvent(organizationId, { ...merged, event_type: merged.event_type }, { auto_close: false });
    return toOrgEvent(row);
  }

  async updateDefault(organizationId: number, eventId: number, input: OrgEventUpdateBody) {
    const row = await this.findDefault(organizationId, eventId);
    // A default event stays a default here: a chapter_id in the body is not this operation's to apply.
    return toOrgEvent(await this.patchEvent(row, { ...input, chapter_id: undefined }));
  }

  async removeDefault(organizationId: number, eventId: number) {
    const row = await this.findDefault(organizationId, eventId);
    return toOrgEvent(await this.removeRow(row));
  }
}
