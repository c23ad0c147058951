/** What the public pages of a hub show, decided by HubPagesService and rendered by src/web/hub-pages.ts. */

export interface HubCard {
  uuid: string;
  title: string;
  description: string | null;
  /** Total seconds of the player's videos, when known. */
  duration: number | null;
  /** The poster at its stable address (/posters/<uuid>), or null when none is stored. */
  poster: string | null;
  watchUrl: string;
  embedUrl: string;
  releasedAt: number;
  expiresAt: number | null;
}

export interface HubCategoryView {
  name: string;
  slug: string;
  url: string;
  cards: HubCard[];
}

export interface HubView {
  name: string;
  description: string | null;
  url: string;
  /** Set on a category's own page. */
  category: HubCategoryView | null;
  categories: HubCategoryView[];
}

export type HubPageOutcome = { kind: 'page'; view: HubView } | { kind: 'not_found' } | { kind: 'blocked' };
