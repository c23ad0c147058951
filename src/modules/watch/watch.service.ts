import type { Config } from '../../config.ts';
import { nowSeconds } from '../../lib/time.ts';
import type { AccessCodes } from './access-codes.ts';
import type { Audience } from './audience.ts';
import type { EmbedCode } from './embed-code.ts';
import type { PlaybackGrants } from './playback-grants.ts';
import type { WatchPlayerRow, WatchRepository } from './watch.repository.ts';
import type { WatchPageService } from './watch-page.service.ts';
import { domainAllows, embedDomains, fitInto, hostOf, NOT_FOUND, originOf, UUID, UUID_PATH } from './watch-rules.ts';
import type { GateOutcome, OembedOutcome, OembedQuery, PageKind, PageOutcome, PageView, Refusal, Visitor } from './watch-view.ts';
import { gateCookieName, gateCookieValue, gatePassed } from './email-gate.ts';

const refused = (refusal: Refusal): PageOutcome => ({ kind: 'refused', refusal });

/** A visitor the page's rules let in. */
interface Admitted {
  kind: 'admitted';
  player: WatchPlayerRow;
  frameAncestors: string[] | null;
  approvalMessage: string | null;
  now: number;
}

/**
 * The public pages of a player (DESIGN §1): the share page `/watch/:uuid`, the iframe page
 * `/embed/:uuid` and the oEmbed description of either. No token: the rules are the player's own
 * (release and expiry dates, access code, embedding and its allowed domains) and the organization's
 * blocked IP ranges. Decisions are documented in docs/watch.md.
 */
export class WatchService {
  constructor(
    private readonly config: Config,
    private readonly repo: WatchRepository,
    private readonly pages: WatchPageService,
    private readonly audience: Audience,
    private readonly accessCodes: AccessCodes,
    private readonly embed: EmbedCode,
    private readonly grants: PlaybackGrants,
  ) {}

  /** What `GET /watch/:uuid` or `GET /embed/:uuid` shows this visitor (or, with a code typed in, grants). */
  async page(kind: PageKind, uuid: string, visitor: Visitor): Promise<PageOutcome> {
    const admitted = await this.admit(kind, uuid, visitor);
    if (admitted.kind !== 'admitted') return admitted;
    const passed = gatePassed(this.secret, admitted.player.uuid, visitor.cookies);
    return { kind: 'page', view: await this.view(kind, admitted, passed) };
  }

  /**
   * The visitor gave an address at the player's email gate (`POST /watch|embed/:uuid/gate`): the
   * page's rules apply as to the page itself; then the page as it is once the gate is passed (every
   * chapter's media) and the cookie that keeps it passed in this browser. Answers not_found when the
   * player has no email gate.
   */
  async passGate(kind: PageKind, uuid: string, visitor: Visitor): Promise<GateOutcome> {
    const admitted = await this.admit(kind, uuid, { ...visitor, accessCode: undefined });
    if (admitted.kind === 'refused') return admitted;
    if (admitted.kind !== 'admitted') return { kind: 'refused', refusal: NOT_FOUND };
    const view = await this.view(kind, admitted, true);
    if (!view.emailGate) return { kind: 'not_found' };
    const { uuid: playerUuid } = admitted.player;
    return { kind: 'passed', view, cookie: { name: gateCookieName(playerUuid), value: gateCookieValue(this.secret, playerUuid) } };
  }

  private get secret(): string {
    return this.config.signingSecret!;
  }

  /** The page's rules, in the order docs/watch.md gives them: the player, or what to answer instead. */
  private async admit(kind: PageKind, uuid: string, visitor: Visitor): Promise<PageOutcome | Admitted> {
    const player = UUID.test(uuid) ? await this.repo.findPlayer(uuid.toLowerCase()) : undefined;
    if (!player) return refused(NOT_FOUND);
    const now = nowSeconds();
    const audience = await this.audience.refusal(player, visitor.ip, now);
    if (audience) return refused(audience);
    const access = await this.repo.findAccessManager(player.id);
    let frameAncestors: string[] | null = null;
    if (kind === 'embed') {
      frameAncestors = embedDomains(player, access);
      const embedding = this.checkEmbedding(player, frameAncestors, visitor.referer);
      if (embedding) return embedding;
    }
    let approvalMessage: string | null = null;
    if (player.access_code) {
      const gate = await this.accessCodes.check(player, access, visitor, (a) => this.repo.countAccessCodeUse(a.id, a.max_access_code_uses));
      if (gate) return gate;
      approvalMessage = access?.enabled ? access.custom_approval_message : null;
    }
    return { kind: 'admitted', player, frameAncestors, approvalMessage, now };
  }

  private view(kind: PageKind, admitted: Admitted, gatePassed: boolean): Promise<PageView> {
    return this.pages.view(kind, admitted.player, admitted.now, admitted.frameAncestors, admitted.approvalMessage, gatePassed);
  }

  /** Embedding enabled, and the embedding page (its Referer) on an allowed domain when a list is set. */
  private checkEmbedding(player: WatchPlayerRow, frameAncestors: string[] | null, referer: string | undefined): PageOutcome | null {
    if (!player.embed_enabled) {
      return refused({
        reason: 'embedding_disabled',
        title: 'Embedding disabled',
        message: 'This video cannot be embedded. Watch it on its own page instead.',
      });
    }
    const from = originOf(referer);
    const own = originOf(this.config.publicUrl);
    const itself = from !== null && own !== null && from.host === own.host && from.port === own.port;
    if (frameAncestors && from && !itself && !domainAllows(frameAncestors, from)) {
      return refused({ reason: 'embedding_not_allowed', title: 'Embedding not allowed here', message: 'This video cannot be embedded on this site.' });
    }
    return null;
  }

  /**
   * The oEmbed description of a watch or embed URL of this service (any of its hosts, or one of the
   * organization's own domains). `responsive` (v1.1) gives embed code that fills its container. The
   * page's rules apply: nothing for a blocked address or outside the release window, and a player
   * behind an access code is described without its title and poster (the code form is what it shows).
   */
  async oembed(query: OembedQuery, responsive: boolean, ip: string): Promise<OembedOutcome> {
    const player = await this.playerAt(query.url);
    if (!player) return { kind: 'not_found' };
    const now = nowSeconds();
    const refusal = await this.audience.refusal(player, ip, now);
    if (refusal?.reason === 'blocked') return { kind: 'forbidden', message: refusal.message };
    // Outside the release window: as if there were no such video.
    if (refusal) return { kind: 'not_found' };
    if (!player.embed_enabled) return { kind: 'forbidden', message: 'This video cannot be embedded' };
    const size = fitInto(player.width, player.height, query.maxwidth, query.maxheight);
    const open = !player.access_code;
    const title = open ? player.name : 'Protected video';
    const poster = open ? await this.pages.poster(player, this.grants.issue(player, 'embed', now)) : null;
    const html = responsive
      ? this.embed.responsiveIframe(player.uuid, title, size.width, size.height)
      : this.embed.iframe(player.uuid, title, size.width, size.height);
    return {
      kind: 'ok',
      oembed: {
        version: '1.0',
        type: 'video',
        provider_name: 'Reelbase',
        provider_url: this.config.publicUrl,
        title,
        author_name: player.organization_name,
        html,
        width: size.width,
        height: size.height,
        // Thumbnails are frames of the video, shown at the player's size.
        ...(poster ? { thumbnail_url: poster, thumbnail_width: size.width, thumbnail_height: size.height } : {}),
      },
    };
  }

  /** The player a watch or embed URL on one of this service's (or the organization's) hosts names. */
  private async playerAt(address: string): Promise<WatchPlayerRow | undefined> {
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      return undefined;
    }
    const match = UUID_PATH.exec(url.pathname);
    if (!match || (url.protocol !== 'http:' && url.protocol !== 'https:')) return undefined;
    const player = await this.repo.findPlayer(match[2].toLowerCase());
    if (!player) return undefined;
    const hosts = [hostOf(this.config.publicUrl), this.config.playbackDomain, this.config.embedDomain, ...(await this.orgDomains(player))].map((h) =>
      h?.toLowerCase().replace(/:\d+$/, ''),
    );
    return hosts.includes(url.hostname.toLowerCase()) ? player : undefined;
  }

  private async orgDomains(player: WatchPlayerRow): Promise<string[]> {
    const org = await this.repo.organizationDomains(player.organization_id);
    return [org?.embed_domain, org?.secure_embed_domain, org?.playback_domain].filter((d): d is string => Boolean(d));
  }
}
