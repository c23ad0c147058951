import { createHmac } from 'node:crypto';
import { sameSecret } from '../../lib/constant-time.ts';
import type { WatchPlayerRow } from './watch.repository.ts';
import type { PageKind } from './watch-view.ts';

/** How long a page's media links work; a viewer who keeps the page open longer reloads it. */
export const PLAYBACK_GRANT_SECONDS = 6 * 3600;

const GRANT = /^([we])(\d{1,12})\.([A-Za-z0-9_-]{32})$/;

/**
 * A playback grant: what a viewer who passed a player's page carries to fetch its media (files,
 * captions, poster, live HLS). It is a path segment of every media URL of the page, so relative
 * segment URLs of a playlist inherit it. Signed with SIGNING_SECRET (every node of a deployment
 * verifies it), bound to the player, the page kind (embed or watch), an expiry, and the player's
 * current access code (changing the code ends every grant). The rules that can change while a grant
 * lives (blocked ranges, release window, embedding) are checked again at every request.
 */
export class PlaybackGrants {
  constructor(private readonly secret: string) {}

  private sign(player: WatchPlayerRow, kind: PageKind, expires: number): string {
    return createHmac('sha256', this.secret)
      .update(`play\n${player.uuid}\n${kind}\n${expires}\n${player.access_code ?? ''}`)
      .digest('base64url')
      .slice(0, 32);
  }

  issue(player: WatchPlayerRow, kind: PageKind, now: number): string {
    const expires = now + PLAYBACK_GRANT_SECONDS;
    return `${kind === 'embed' ? 'e' : 'w'}${expires}.${this.sign(player, kind, expires)}`;
  }

  /** The page kind the grant was issued for, or null when it is not a valid, unexpired grant of this player. */
  verify(player: WatchPlayerRow, grant: string, now: number): PageKind | null {
    const match = GRANT.exec(grant);
    if (!match) return null;
    const kind: PageKind = match[1] === 'e' ? 'embed' : 'watch';
    const expires = Number(match[2]);
    if (expires <= now) return null;
    return sameSecret(match[3], this.sign(player, kind, expires)) ? kind : null;
  }
}
