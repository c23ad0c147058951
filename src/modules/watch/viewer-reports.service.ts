import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { invalidField } from '../../lib/errors.ts';
import { nowSeconds } from '../../lib/time.ts';
import type { WebhooksService } from '../webhooks/webhooks.service.ts';
import type { Audience } from './audience.ts';
import type { EmbedCode } from './embed-code.ts';
import type { WatchRepository } from './watch.repository.ts';
import { UUID } from './watch-rules.ts';
import type { AnalyticsBeacon } from './watch.schemas.ts';
import type { AnalyticsService } from '../analytics/analytics.service.ts';
import type { ClientFacts } from '../analytics/client-facts.ts';

const REQUIRED = {
  load: null,
  view: 'percent_watched',
  identified_view: 'email',
  attention_span: 'buckets',
  cta_impression: 'event_id',
  cta_click: 'event_id',
} as const;
/** The reports the analytics webhooks carry (docs/webhooks.md). */
const WEBHOOK_TYPES = new Set(['view', 'identified_view', 'attention_span']);

/**
 * Viewers' reports from the player script (loads, views, attention, CTAs, identified views): kept
 * (docs/analytics.md), and those that are new sent on to the analytics webhooks.
 */
export class ViewerReportsService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly repo: WatchRepository,
    private readonly audience: Audience,
    private readonly webhooks: WebhooksService,
    private readonly embed: EmbedCode,
    private readonly analytics: AnalyticsService,
  ) {}

  /**
   * Sends the report to the organization's analytics webhooks that subscribed to its type. Answers
   * false when there is nothing to report it about (an unknown player or chapter, a blocked address,
   * a player out of its release window); a report missing what its type needs is a 422. `admit` runs
   * once the report is known to be about a real chapter, before anything is sent: where the caller
   * counts it against a limit, so that reports about nothing cannot fill the limits.
   */
  async report(uuid: string, ip: string, beacon: AnalyticsBeacon, client: ClientFacts, admit: () => Promise<void> = async () => {}): Promise<boolean> {
    if (!UUID.test(uuid)) return false;
    const field = REQUIRED[beacon.type];
    if (field && beacon[field] === undefined) throw invalidField(field, `is required for ${beacon.type}`);
    const player = await this.repo.findPlayer(uuid.toLowerCase());
    if (!player || (await this.audience.refusal(player, ip, nowSeconds()))) return false;
    // Chapters in position order, as the page lists them.
    const chapter = await this.repo.chapterAt(player, beacon.chapter);
    if (!chapter) return false;
    // Counted before the CTA is checked: a sender making up CTA ids is limited like any other.
    await admit();
    // A CTA's figures count only what this player shows.
    if (beacon.event_id !== undefined && !(await this.repo.isEventOf(beacon.event_id, player))) {
      throw invalidField('event_id', 'is not a CTA of this player');
    }
    const kept = await this.analytics.collect({
      organizationId: player.organization_id,
      playerId: player.id,
      videoId: chapter.video_id,
      beacon,
      client,
      ip,
    });
    // A replayed report, or a bot's, is not delivered again (or at all).
    if (!kept || !WEBHOOK_TYPES.has(beacon.type) || !(await this.webhooks.subscribed(player.organization_id, 'analytics', beacon.type))) return true;
    const fields: Record<string, unknown> = {
      visitor_vidyard_uuid: beacon.visitor_uuid,
      player_uuid: player.uuid,
      player_name: player.name,
      video_id: chapter.video_id,
      video_name: chapter.video_name ?? null,
      player_load_id: beacon.player_load_id,
    };
    if (beacon.type === 'view')
      Object.assign(fields, { percent_watched: beacon.percent_watched, embed_url: beacon.embed_url ?? this.embed.watchUrl(player.uuid) });
    if (beacon.type === 'identified_view') fields.email = beacon.email!.toLowerCase();
    if (beacon.type === 'attention_span') fields.attention_span = { bucket_count: 20, buckets: beacon.buckets };
    await this.db.transaction().execute((trx) => this.webhooks.notify(trx, player.organization_id, 'analytics', beacon.type, fields));
    return true;
  }
}
