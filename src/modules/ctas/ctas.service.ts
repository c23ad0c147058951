import type { Page } from '../../lib/paging.ts';
import type { EventRow } from '../events/events.repository.ts';
import { MAX_CTA_WIDTH } from '../events/events.schemas.ts';
import type { EventsService, PlayerRef } from '../events/events.service.ts';
import type { Cta, CtaCreateBody, CtaUpdateBody, EmailGate, EmailGateCreateBody } from './ctas.schemas.ts';
import { viewOf } from '../../db/read-cache.ts';
import { mapMaybe, type MaybePromise } from '../../lib/maybe-promise.ts';

export function toCta(row: EventRow): Cta {
  return {
    id: row.id,
    chapter_id: row.chapter_id,
    second: row.second,
    duration: row.duration,
    auto_close: Boolean(row.auto_close),
    width: row.width,
    html: row.html,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

export function toEmailGate(row: EventRow): EmailGate {
  const { width: _width, ...rest } = toCta(row);
  return { ...rest, chapter_id: row.chapter_id ?? 0 };
}

/** The form of the default email gate (see docs/ctas.md); the player intercepts its submit. */
export function emailGateHtml(isCloseable: boolean, isNewContact: boolean): string {
  return [
    `<form class="reelbase-email-gate" data-reelbase-event="email_gate" data-closeable="${isCloseable}" data-new-contacts-only="${isNewContact}" method="post" novalidate>`,
    '  <h2 class="reelbase-email-gate__title">Enter your email to keep watching</h2>',
    '  <label class="reelbase-email-gate__label" for="reelbase-email-gate-email">Email address</label>',
    '  <input class="reelbase-email-gate__input" id="reelbase-email-gate-email" type="email" name="email" autocomplete="email" placeholder="you@example.com" required>',
    '  <button class="reelbase-email-gate__submit" type="submit">Watch now</button>',
    ...(isCloseable ? ['  <button class="reelbase-email-gate__skip" type="button" data-reelbase-close>Skip</button>'] : []),
    '</form>',
  ].join('\n');
}

/**
 * CTAs are views of events: every event placed on a chapter (and, where asked, every organization
 * default event) is a CTA here. Creation makes a `simple_overlay` event; the default email gate a
 * `simple_email` one.
 */
export class CtasService {
  constructor(private readonly events: EventsService) {}

  async create(organizationId: number, input: CtaCreateBody): Promise<Cta> {
    const chapterId = input.chapter_id ?? null;
    if (chapterId !== null) await this.events.resolveChapter(organizationId, chapterId);
    const row = await this.events.insertEvent(
      organizationId,
      {
        event_type: 'simple_overlay',
        chapter_id: chapterId,
        second: input.second,
        duration: input.duration ?? null,
        auto_close: input.auto_close,
        width: input.width,
        html: input.html,
      },
      { auto_close: true },
    );
    return toCta(row);
  }

  async createEmailGate(organizationId: number, input: EmailGateCreateBody): Promise<EmailGate> {
    await this.events.resolveChapter(organizationId, input.chapter_id);
    const row = await this.events.insertEvent(
      organizationId,
      {
        event_type: 'simple_email',
        name: 'Email gate',
        chapter_id: input.chapter_id,
        second: 0,
        duration: null,
        auto_close: false,
        width: null,
        html: emailGateHtml(input.is_closeable, input.is_new_contact),
        closeable: input.is_closeable,
        is_new_contact: input.is_new_contact,
        fullscreen: true,
      },
      { auto_close: false },
    );
    return toEmailGate(row);
  }

  get(organizationId: number, id: number): MaybePromise<Cta> {
    return mapMaybe(this.events.find(organizationId, id), (row) => viewOf(row, toCta));
  }

  async update(organizationId: number, id: number, input: CtaUpdateBody): Promise<Cta> {
    // Only the CTA attributes; anything else in the body is not this operation's to change.
    const { second, duration, auto_close, width, html } = input;
    return toCta(await this.events.patchById(organizationId, id, { second, duration, auto_close, width, html }));
  }

  async remove(organizationId: number, id: number): Promise<Cta> {
    return toCta(await this.events.removeRow(await this.events.find(organizationId, id)));
  }

  async listForChapter(organizationId: number, chapterId: number, page: Page) {
    await this.events.resolveChapter(organizationId, chapterId);
    const { rows, total } = await this.events.listRows({ organizationId, chapterId }, page);
    return { items: rows.map(toCta), total };
  }

  async listForPlayer(organizationId: number, ref: PlayerRef, includeDefaults: boolean, page: Page) {
    const player = await this.events.resolvePlayer(organizationId, ref);
    const { rows, total } = await this.events.listRows({ organizationId, playerId: player.id, includeDefaults }, page);
    return { items: rows.map(toCta), total };
  }

  /** Counts the player's own CTAs (events on its chapters) by state; defaults are not counted. One sum of `event_counts` rows by state. */
  async meta(organizationId: number, ref: PlayerRef) {
    const player = await this.events.resolvePlayer(organizationId, ref);
    const byState = await this.events.repo.countBy({ organizationId, playerId: player.id }, 'state');
    return { max_cta_width: MAX_CTA_WIDTH, num_public_ctas: byState.public ?? 0, num_draft_ctas: byState.draft ?? 0 };
  }
}
