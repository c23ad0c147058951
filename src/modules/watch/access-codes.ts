import { createHmac } from 'node:crypto';
import { sameSecret } from '../../lib/constant-time.ts';
import type { WatchAccessRow, WatchPlayerRow } from './watch.repository.ts';
import type { PageOutcome, Visitor } from './watch-view.ts';

export const accessCookieName = (uuid: string) => `reelbase_access_${uuid}`;

/**
 * A player's access code: a visitor who typed the right one keeps a grant (an HMAC of the player and
 * its current code, so that changing the code ends every grant) in a cookie.
 */
export class AccessCodes {
  constructor(private readonly secret: string) {}

  grantFor(player: WatchPlayerRow): string {
    return createHmac('sha256', this.secret).update(`access:${player.uuid}:${player.access_code}`).digest('base64url');
  }

  /**
   * null: the visitor may watch. Otherwise what to answer: a form, a refusal, or a grant to remember.
   * `countUse` records one use of the access manager's allowance (false when it is used up).
   */
  async check(
    player: WatchPlayerRow,
    access: WatchAccessRow | undefined,
    visitor: Visitor,
    countUse: (access: WatchAccessRow) => Promise<boolean>,
  ): Promise<PageOutcome | null> {
    if (sameSecret(visitor.cookies[accessCookieName(player.uuid)] ?? '', this.grantFor(player))) return null;
    const denial = (access?.enabled && access.custom_denial_message) || 'The access code is not correct.';
    if (visitor.accessCode === undefined) {
      return {
        kind: 'refused',
        refusal: { reason: 'code_required', title: 'Access code required', message: 'Enter the access code to watch this video.', askCode: true },
      };
    }
    if (!sameSecret(visitor.accessCode.trim(), player.access_code!)) {
      return { kind: 'refused', refusal: { reason: 'code_required', title: 'Access code required', message: denial, askCode: true } };
    }
    if (access?.enabled && !(await countUse(access))) {
      return {
        kind: 'refused',
        refusal: { reason: 'code_used_up', title: 'Access code used up', message: 'This access code has been used as often as it may be.' },
      };
    }
    return { kind: 'granted', cookie: { name: accessCookieName(player.uuid), value: this.grantFor(player) } };
  }
}
