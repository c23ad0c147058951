import { randomBytes } from 'node:crypto';
import type { Kysely, Updateable } from 'kysely';
import { lockOrganization, isUniqueViolation } from '../../db/dialect.ts';
import type { CaptionsTable, DB } from '../../db/schema.ts';
import { AppError, invalidField, notFound } from '../../lib/errors.ts';
import type { Listing, Page } from '../../lib/paging.ts';
import { enqueue, type JobPayload } from '../job-kinds.ts';
import { nowSeconds } from '../../lib/time.ts';
import { putSmall, readSmall, type FileStore } from '../../media/file-store.ts';
import type { UrlSigner } from '../../media/signed-urls.ts';
import type { IpRangesService } from '../ip-ranges/ip-ranges.service.ts';
import { enqueueDelete, videoPrefix } from '../videos/video-jobs.ts';
import type { VideosRepository } from '../videos/videos.repository.ts';
import type { CaptionsRepository, CaptionRow } from './captions.repository.ts';
import type { Caption, CaptionListQuery, CaptionStatus, ContentFormat, ContentStatus, CreateCaptionBody, UpdateCaptionBody } from './captions.schemas.ts';
import { formattedLanguageName, localizedLanguageName, normalizeLanguage } from './languages.ts';
import { detectFormat, parseSubtitles, parseVtt, SubtitleParseError, toFormattedText, toPlainText, toSrt, toVtt, type SubtitleFormat } from './subtitles.ts';

/** The job that fetches a caption file given by URL. */
export type CaptionFetchPayload = JobPayload<'caption.fetch'>;

/** Captions one video may have (lists are sorted in memory, so they must stay bounded). */
export const MAX_CAPTIONS_PER_VIDEO = 200;
/** Largest caption file fetched from a URL. */
export const MAX_CAPTION_BYTES = 5 * 1024 * 1024;

const PUBLISH_ERROR = "Caption must be set to 'draft', or 'complete' to set it to 'published'";
const DRAFT_ERROR = "Caption must be set to 'complete', 'draft', or 'published' to set it to 'draft'";

const MEDIA_TYPES: Record<ContentFormat, string> = {
  vtt: 'text/vtt; charset=utf-8',
  srt: 'application/x-subrip; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
};

/** A file to answer with: its text, media type and the name a download gets. */
export interface CaptionFile {
  body: string;
  type: string;
  filename: string;
}

type Source = { kind: 'inline'; text: string; format?: SubtitleFormat } | { kind: 'url'; url: string; format: SubtitleFormat };

/** What the body asks for as the caption's content; null when it names none. */
function sourceOf(body: { content?: string; format?: SubtitleFormat; srt_url?: string; vtt_url?: string }): Source | null {
  const url = body.srt_url ?? body.vtt_url;
  if (body.content !== undefined && url !== undefined) {
    throw invalidField('content', 'cannot be given together with srt_url or vtt_url');
  }
  if (body.content !== undefined) return { kind: 'inline', text: body.content, format: body.format };
  // Both URLs: SRT wins, as in the reference.
  if (body.srt_url !== undefined) return { kind: 'url', url: body.srt_url, format: 'srt' };
  if (body.vtt_url !== undefined) return { kind: 'url', url: body.vtt_url, format: 'vtt' };
  return null;
}

/** Parsed caption text: the columns to store, and the WebVTT file to put in the media store (null on error). */
export interface ProcessedCaption {
  columns: Updateable<CaptionsTable>;
  vtt: string | null;
}

/**
 * Parses caption text into WebVTT, or the error naming the line. Without `format` the text's own
 * signature decides (WEBVTT or else SRT).
 */
export function processCaption(text: string, format: SubtitleFormat = detectFormat(text)): ProcessedCaption {
  try {
    const subs = parseSubtitles(text, format);
    const columns: Updateable<CaptionsTable> = {
      status: 'complete',
      source_format: format,
      formatted_text: toFormattedText(subs),
      plain_text: toPlainText(subs),
      cue_count: subs.cues.length,
      error_message: null,
      error_line: null,
    };
    return { columns, vtt: toVtt(subs) };
  } catch (err) {
    if (!(err instanceof SubtitleParseError)) throw err;
    return failedCaption(`The ${format === 'vtt' ? 'WebVTT' : 'SRT'} file is malformed: ${err.message}`, err.line, format);
  }
}

export function failedCaption(message: string, line: number | null = null, format?: SubtitleFormat): ProcessedCaption {
  const columns: Updateable<CaptionsTable> = {
    status: 'error',
    content: null,
    file_key: null,
    formatted_text: null,
    plain_text: null,
    cue_count: 0,
    error_message: message,
    error_line: line,
  };
  if (format) columns.source_format = format;
  return { columns, vtt: null };
}

/** Where a caption's WebVTT file is kept: under its video's folder, so that deleting the video removes it. */
const fileKeyOf = (videoUuid: string, row: { id: number; revision: number }) => `${videoPrefix(videoUuid)}/captions/${row.id}-r${row.revision}.vtt`;
/** An inline file's key: written before its caption's row exists (or gets its new revision). */
const newFileKey = (videoUuid: string) => `${videoPrefix(videoUuid)}/captions/${randomBytes(6).toString('hex')}.vtt`;

/** An inline source, processed and its file stored before the transaction that records it. */
interface PreparedInline {
  columns: Updateable<CaptionsTable>;
  /** The stored file, removed again when the transaction does not commit. */
  fileKey: string | null;
}

function canonicalLanguage(raw: string, field: string): string {
  const tag = normalizeLanguage(raw);
  if (!tag) throw invalidField(field, 'must be a language tag such as en, en-US, pt-BR or zh-Hant');
  return tag;
}

export class CaptionsService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly signer: UrlSigner,
    private readonly captions: CaptionsRepository,
    private readonly videos: VideosRepository,
    private readonly ipRanges: IpRangesService,
    private readonly store: FileStore,
  ) {}

  /** Columns of a processed caption, its WebVTT file put in the store first. */
  private async stored(row: CaptionRow, videoUuid: string, processed: ProcessedCaption): Promise<Updateable<CaptionsTable>> {
    if (processed.vtt === null) return processed.columns;
    const key = fileKeyOf(videoUuid, row);
    await putSmall(this.store, key, processed.vtt);
    return { ...processed.columns, file_key: key, content: null };
  }

  /**
   * Inline text is parsed and its file stored before the transaction: a store write inside one would
   * hold the organization's lock for the length of an upload (and, on SQLite, the only connection
   * that the store's object index writes through).
   */
  private async prepareInline(source: Source | null, videoUuid: string): Promise<PreparedInline | null> {
    if (source?.kind !== 'inline') return null;
    const processed = processCaption(source.text, source.format);
    if (processed.vtt === null) return { columns: processed.columns, fileKey: null };
    const fileKey = newFileKey(videoUuid);
    await putSmall(this.store, fileKey, processed.vtt);
    return { columns: { ...processed.columns, file_key: fileKey, content: null }, fileKey };
  }

  /** Runs a write that records a prepared file; the file goes again when the write fails. */
  private async writeWith<T>(prepared: PreparedInline | null, work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
    try {
      return await this.write(work);
    } catch (err) {
      if (prepared?.fileKey) await this.store.delete(prepared.fileKey).catch(() => undefined);
      throw err;
    }
  }

  /** The caption's WebVTT text: from the store, or from the row for a caption written before files moved there. */
  private async vttOf(row: CaptionRow): Promise<string | null> {
    if (row.file_key === null) return row.content;
    return (await readSmall(this.store, row.file_key)).toString('utf8');
  }

  /** The public path of a caption file (signed URLs point there). */
  static filePath(id: number, language: string, format: ContentFormat): string {
    return CaptionsService.pathOf(id, `${language}.${format}`);
  }

  private static pathOf(id: number, file: string): string {
    return `/dashboard/v1/captions/${id}/files/${file}`;
  }

  toCaption(row: CaptionRow, now = nowSeconds()): Caption {
    const has = row.file_key !== null || row.content !== null;
    const url = (format: ContentFormat, download: boolean) => {
      if (!has) return null;
      const signed = this.signer.sign(CaptionsService.filePath(row.id, row.language, format), now);
      return download ? `${signed}&download=true` : signed;
    };
    return {
      id: row.id,
      video_id: row.video_id,
      language: row.language,
      status: row.status as CaptionStatus,
      is_default: Boolean(row.is_default),
      notes: row.notes,
      srt_url: url('srt', false),
      vtt_url: url('vtt', false),
      txt_url: url('txt', false),
      srt_download_url: url('srt', true),
      vtt_download_url: url('vtt', true),
      txt_download_url: url('txt', true),
      formatted_text: row.formatted_text,
      plain_text: row.plain_text,
      formatted_language_name: formattedLanguageName(row.language),
      localized_language_name: localizedLanguageName(row.language),
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  private async requireVideo(db: Kysely<DB>, organizationId: number, videoId: number) {
    const video = await this.videos.with(db).find(organizationId, videoId);
    if (!video) throw notFound('video', videoId);
    return video;
  }

  private async requireCaption(organizationId: number, id: number, repo = this.captions): Promise<CaptionRow> {
    const row = await repo.find(organizationId, id);
    if (!row) throw notFound('caption', id);
    return row;
  }

  /** Runs a write; a lost race on the one-default-per-video index is a 409, not a 5xx. */
  private async write<T>(work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction().execute(work);
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('conflict', 'Another caption of this video was made the default at the same time; try again');
      throw err;
    }
  }

  async list(organizationId: number, videoId: number, query: CaptionListQuery, page: Page): Promise<Listing<Caption>> {
    await this.requireVideo(this.db, organizationId, videoId);
    const languages = query.language?.map((l, i) => canonicalLanguage(l, query.language!.length > 1 ? `language.${i}` : 'language'));
    const rows = await this.captions.forVideo(organizationId, videoId, { languages, statuses: query.status }, MAX_CAPTIONS_PER_VIDEO * 2);
    // Sorted here, not in SQL: text order must not depend on the database's collation.
    const sortBy = query.sort_by;
    if (sortBy) {
      const sign = query.direction === 'desc' ? -1 : 1;
      rows.sort((a, b) => {
        const x = a[sortBy];
        const y = b[sortBy];
        const primary = x < y ? -1 : x > y ? 1 : 0;
        return primary * sign || a.id - b.id;
      });
    } else if (query.direction === 'desc') {
      rows.reverse();
    }
    const now = nowSeconds();
    const items = rows.slice(page.offset, page.offset + page.limit).map((r) => this.toCaption(r, now));
    return { items, total: rows.length };
  }

  /** The video's published captions, in id order (what a player offers its viewers). */
  async published(organizationId: number, videoId: number): Promise<Caption[]> {
    const rows = await this.captions.forVideo(organizationId, videoId, { statuses: ['published'] }, MAX_CAPTIONS_PER_VIDEO);
    const now = nowSeconds();
    return rows.map((r) => this.toCaption(r, now));
  }

  async create(organizationId: number, videoId: number, body: CreateCaptionBody): Promise<Caption> {
    const language = canonicalLanguage(body.language, 'language');
    const source = sourceOf(body);
    if (!source) throw invalidField('content', 'is required (or srt_url / vtt_url)');
    const prepared = await this.prepareInline(source, (await this.requireVideo(this.db, organizationId, videoId)).uuid);
    const row = await this.writeWith(prepared, async (trx) => {
      await lockOrganization(trx, organizationId);
      await this.requireVideo(trx, organizationId, videoId);
      const repo = this.captions.with(trx);
      const existing = await repo.forVideo(organizationId, videoId, {}, MAX_CAPTIONS_PER_VIDEO);
      if (existing.length >= MAX_CAPTIONS_PER_VIDEO) {
        throw invalidField('video_id', `already has ${MAX_CAPTIONS_PER_VIDEO} captions, the most a video may have`);
      }
      const now = nowSeconds();
      if (body.is_default) await repo.clearDefault(videoId, null, now);
      const created = await repo.insert({
        organization_id: organizationId,
        video_id: videoId,
        language,
        status: 'in_progress',
        is_default: body.is_default ?? false,
        notes: body.notes ?? null,
        source_format: source.kind === 'url' ? source.format : (source.format ?? null),
        source_url: source.kind === 'url' ? source.url : null,
        revision: 1,
        created_at: now,
        updated_at: now,
      });
      return this.applySource(trx, created, source, prepared);
    });
    return this.toCaption(row);
  }

  /**
   * Puts a new source in place: inline text is parsed now (complete or error); a URL leaves the
   * caption in_progress and enqueues the fetch for this revision.
   */
  private async applySource(trx: Kysely<DB>, row: CaptionRow, source: Source, prepared: PreparedInline | null): Promise<CaptionRow> {
    if (source.kind === 'url' || !prepared) {
      await enqueue(trx, 'caption.fetch', { caption_id: row.id, revision: row.revision });
      return row;
    }
    const updated = await this.captions.with(trx).update(row.organization_id, row.id, prepared.columns);
    return updated!;
  }

  async get(organizationId: number, id: number): Promise<Caption> {
    return this.toCaption(await this.requireCaption(organizationId, id));
  }

  async update(organizationId: number, id: number, body: UpdateCaptionBody): Promise<Caption> {
    const language = body.language === undefined ? undefined : canonicalLanguage(body.language, 'language');
    const source = sourceOf(body);
    if (body.format !== undefined && (!source || source.kind !== 'inline')) throw invalidField('format', 'is only meaningful with content');
    let replaced: string | null = null;
    const prepared = source?.kind === 'inline' ? await this.prepareInline(source, await this.videoUuidOf(organizationId, id)) : null;
    const row = await this.writeWith(prepared, async (trx) => {
      await lockOrganization(trx, organizationId);
      const repo = this.captions.with(trx);
      const current = await this.requireCaption(organizationId, id, repo);
      const changes: Updateable<CaptionsTable> = {};
      if (language !== undefined && language !== current.language) changes.language = language;
      if (body.notes !== undefined && body.notes !== current.notes) changes.notes = body.notes;
      if (body.is_default !== undefined && body.is_default !== Boolean(current.is_default)) changes.is_default = body.is_default;
      if (source) {
        // A new file replaces the content: processed again, and no longer draft or published.
        Object.assign(changes, {
          status: 'in_progress',
          source_format: source.kind === 'url' ? source.format : (source.format ?? null),
          source_url: source.kind === 'url' ? source.url : null,
          content: null,
          file_key: null,
          formatted_text: null,
          plain_text: null,
          cue_count: 0,
          error_message: null,
          error_line: null,
          revision: current.revision + 1,
        } satisfies Updateable<CaptionsTable>);
        // The replaced file goes once this commits (at once below, else by the queued job).
        replaced = current.file_key;
        if (replaced) await enqueueDelete(trx, [replaced]);
      }
      if (Object.keys(changes).length === 0) return current;
      const now = nowSeconds();
      if (changes.is_default === true) await repo.clearDefault(current.video_id, id, now);
      const updated = (await repo.update(organizationId, id, { ...changes, updated_at: now }))!;
      if (!source) return updated;
      return this.applySource(trx, updated, source, prepared);
    });
    if (replaced) await this.store.delete(replaced).catch(() => undefined);
    return this.toCaption(row);
  }

  private async videoUuidOf(organizationId: number, captionId: number): Promise<string> {
    const caption = await this.requireCaption(organizationId, captionId);
    return (await this.requireVideo(this.db, organizationId, caption.video_id)).uuid;
  }

  async delete(organizationId: number, id: number): Promise<Caption> {
    const row = await this.db.transaction().execute(async (trx) => {
      const deleted = await this.captions.with(trx).delete(organizationId, id);
      if (deleted?.file_key) await enqueueDelete(trx, [deleted.file_key]);
      return deleted;
    });
    if (!row) throw notFound('caption', id);
    // At once when the store answers; else the queued job does it.
    if (row.file_key) await this.store.delete(row.file_key).catch(() => undefined);
    return this.toCaption(row);
  }

  async contentStatus(organizationId: number, id: number): Promise<ContentStatus> {
    const row = await this.requireCaption(organizationId, id);
    const contentStatus = row.status === 'in_progress' || row.status === 'error' ? row.status : 'complete';
    return {
      id: row.id,
      video_id: row.video_id,
      status: row.status as CaptionStatus,
      content_status: contentStatus,
      error_message: row.error_message,
      error_line: row.error_line,
      cue_count: row.cue_count,
      updated_at: row.updated_at,
    };
  }

  /** The caption's content as `format`; 409 while there is none (being fetched, or failed). */
  async content(organizationId: number, id: number, format: ContentFormat): Promise<CaptionFile> {
    return this.fileOf(await this.requireCaption(organizationId, id), format);
  }

  private async fileOf(row: CaptionRow, format: ContentFormat): Promise<CaptionFile> {
    const vtt = await this.vttOf(row);
    if (vtt === null) {
      const why = row.status === 'in_progress' ? 'is still being processed' : `could not be processed: ${row.error_message ?? 'unknown error'}`;
      throw new AppError('conflict', `The caption has no content: it ${why}`);
    }
    let body = vtt;
    if (format !== 'vtt') {
      const subs = parseVtt(vtt);
      body = format === 'srt' ? toSrt(subs) : `${toPlainText(subs)}\n`;
    }
    return { body, type: MEDIA_TYPES[format], filename: `caption-${row.id}-${row.language}.${format}` };
  }

  /** A published caption of one of `videoIds`, as WebVTT (what a player page offers); else 404. */
  async publishedVtt(organizationId: number, videoIds: number[], id: number): Promise<CaptionFile> {
    const row = await this.captions.findById(id);
    if (!row || row.organization_id !== organizationId || row.status !== 'published' || !videoIds.includes(row.video_id)) throw notFound('caption', id);
    return this.fileOf(row, 'vtt');
  }

  /** A published caption by id alone (the API's HLS master names it by a signed link): its video and signed WebVTT URL; else 404. */
  async publishedById(id: number): Promise<{ organizationId: number; videoId: number; vttUrl: string }> {
    const row = await this.captions.findById(id);
    const vttUrl = row?.status === 'published' ? this.toCaption(row).vtt_url : null;
    if (!row || !vttUrl) throw notFound('caption', id);
    return { organizationId: row.organization_id, videoId: row.video_id, vttUrl };
  }

  /** A file behind a signed URL: the signature covers the path, so no token is needed. */
  async signedFile(id: number, file: string, expires: string | undefined, signature: string | undefined, ip: string): Promise<CaptionFile> {
    const at = Number(expires);
    if (!expires || !/^\d+$/.test(expires) || !signature || !this.signer.verify(CaptionsService.pathOf(id, file), at, signature, nowSeconds())) {
      throw new AppError('forbidden', 'The URL signature is invalid or has expired');
    }
    const row = await this.captions.findById(id);
    if (!row) throw notFound('caption', id);
    if (await this.ipRanges.isBlocked(row.organization_id, ip)) throw new AppError('forbidden', 'This file is not available from your network');
    return this.fileOf(row, file.slice(file.lastIndexOf('.') + 1) as ContentFormat);
  }

  private async transition(organizationId: number, id: number, target: 'draft' | 'published'): Promise<Caption> {
    const allowed: CaptionStatus[] = target === 'published' ? ['draft', 'complete'] : ['complete', 'published', 'draft'];
    const current = await this.requireCaption(organizationId, id);
    if (!allowed.includes(current.status as CaptionStatus)) {
      throw new AppError('bad_request', target === 'published' ? PUBLISH_ERROR : DRAFT_ERROR);
    }
    if (current.status === target) return this.toCaption(current);
    // Conditional on the state read, so a concurrent change (e.g. a new file) is not overwritten.
    const row = await this.captions.updateIfState(organizationId, id, current.status, current.revision, { status: target, updated_at: nowSeconds() });
    if (!row) throw new AppError('conflict', 'The caption changed while its status was being set; try again');
    return this.toCaption(row);
  }

  /** The caption a fetch job should work on, or null when its source changed or it was deleted. */
  async pendingFetch(payload: CaptionFetchPayload): Promise<CaptionRow | null> {
    const row = await this.captions.findById(payload.caption_id);
    if (!row || row.revision !== payload.revision || row.status !== 'in_progress' || !row.source_url) return null;
    return row;
  }

  /** Stores a fetch job's outcome, unless a newer source replaced the one fetched (or the caption went). */
  async finishFetch(payload: CaptionFetchPayload, processed: ProcessedCaption): Promise<void> {
    const row = await this.pendingFetch(payload);
    if (!row) return;
    const video = await this.videos.find(row.organization_id, row.video_id);
    if (!video) return;
    const columns = await this.stored(row, video.uuid, processed);
    const applied = await this.captions.updateIfRevision(payload.caption_id, payload.revision, { ...columns, updated_at: nowSeconds() });
    if (!applied && columns.file_key) await this.store.delete(columns.file_key).catch(() => undefined);
  }

  /**
   * Moves the files of captions written before they lived in the media store (their WebVTT was a
   * column) to the store, in batches; several workers may run it at once (each file has one key).
   * Answers how many moved.
   */
  async storeLegacyFiles(batchSize = 100): Promise<number> {
    let moved = 0;
    for (;;) {
      const rows = await this.captions.withLegacyContent(batchSize);
      let progress = 0;
      for (const row of rows) {
        const video = await this.videos.find(row.organization_id, row.video_id);
        if (!video) continue;
        const key = fileKeyOf(video.uuid, row);
        await putSmall(this.store, key, row.content!);
        if (await this.captions.moveContent(row.id, row.revision, key)) progress++;
      }
      moved += progress;
      // Nothing left, or only rows another worker is moving right now.
      if (progress === 0) return moved;
    }
  }

  setDraft(organizationId: number, id: number): Promise<Caption> {
    return this.transition(organizationId, id, 'draft');
  }

  publish(organizationId: number, id: number): Promise<Caption> {
    return this.transition(organizationId, id, 'published');
  }
}
