import { createHmac } from 'node:crypto';
import { sameSecret } from '../../lib/constant-time.ts';
import type { WatchPlayerRow } from './watch.repository.ts';
import type { PageKind } from './watch-view.ts';

/** How long a page's media links work; a viewer who keeps the page open longer reloads it. */
export const PLAYBACK_GRANT_SECONDS = 6 * 3600;

const GRANT = /^([we])(g?)(\d{1,12})\.([A-Za-z0-9_-]{32})$/;

/** A verified grant: the page kind it was issued for, and whether its viewer is short of the player's email gate. */
export interface Grant {
  kind: PageKind;
  gated: boolean;
}

/**
 * A playback grant: what a viewer who passed a player's page carries to fetch its media (files,
 * captions, poster, live HLS). It is a path segment of every media URL of the page, so relative
 * segment URLs of a playlist inherit it. Signed with SIGNING_SECRET (every node of a deployment
 * verifies it), bound to the player, the page kind (embed or watch), an expiry, and the player's
 * current access code (changing the code ends every grant), and whether the viewer had not passed
 * the player's email gate (`g`: such a grant admits only what the gate lets through). The rules that can change while a grant
 * lives (blocked ranges, release window, embedding) are checked again at every request.
 */
export class PlaybackGrants {
  constructor(private readonly secret: string) {}

  private sign(player: WatchPlayerRow, kind: PageKind, gated: boolean, expires: number): string {
    return createHmac('sha256', this.secret)
      .update(`play\n${player.uuid}\n${kind}${gated ? '\ngated' : ''}\n${expires}\n${player.access_code ?? ''}`)
      .digest('base64url')
      .slice(0, 32);
  }

  issue(player: WatchPlayerRow, kind: PageKind, now: number, gated = false): string {
    const expires = now + PLAYBACK_GRANT_SECONDS;
    return `${kind === 'embed' ? 'e' : 'w'}${gated ? 'g' : ''}${expires}.${this.sign(player, kind, gated, expires)}`;
  }

  /** What the grant was issued for, or null when it is not a valid, unexpired grant of this player. */
  verify(player: WatchPlayerRow, grant: string, now: number): Grant | null {
    const match = GRANT.exec(grant);
    if (!match) return null;
    const kind: PageKind = match[1] === 'e' ? 'embed' : 'watch';
    const gated = match[2] === 'g';
    const expires = Number(match[3]);
    if (expires <= now) return null;
    return sameSecret(match[4], this.sign(player, kind, gated, expires)) ? { kind, gated } : null;
  }
}
