/** What the public pages of a player show, decided by the watch services and rendered by src/web/pages.ts. */

export type PageKind = 'watch' | 'embed';

/** Who asks for a page, as far as the rules care. */
export interface Visitor {
  ip: string;
  /** The Referer header, if any: the page an embed sits on. */
  referer?: string;
  /** Cookies by name. */
  cookies: Record<string, string>;
  /** An access code the visitor just typed in. */
  accessCode?: string;
}

export interface PageEvent {
  id: number;
  event_type: string;
  /** -1: after the chapter ends (postroll). */
  second: number;
  duration: number | null;
  auto_close: boolean;
  closeable: boolean;
  fullscreen: boolean;
  width: number | null;
  html: string | null;
  background_color: string | null;
}

export interface PageChapter {
  position: number;
  name: string;
  description: string | null;
  /**
   * ready: sources play; live: the broadcast over HLS; upcoming: a broadcast that has not started
   * (`live` says when); processing / unavailable: nothing to play yet.
   */
  state: 'ready' | 'live' | 'upcoming' | 'processing' | 'unavailable';
  /**
   * The chapter lies behind an email gate the visitor has not passed: its media (sources, hls,
   * captions) is left out of the page and handed over by the gate's POST (docs/watch.md).
   */
  gated: boolean;
  /**
   * The second where the email gate (not yet passed) opens in this chapter, which plays up to it:
   * its HLS playlists end there and it has no MP4 `sources`; the gate's POST answers it whole.
   */
  gatedAt: number | null;
  /** Its video's selected thumbnail (stored), through the viewer's grant; null when none. */
  thumbnail: string | null;
  /** Its video's length in seconds, when known. */
  duration: number | null;
  /** The broadcast this chapter shows, when its video is a live instance's that is not yet a ready recording. */
  live: { status: string; air_date: number | null; dvr: boolean } | null;
  sources: Array<{ src: string; type: string; quality: string }>;
  /**
   * The adaptive stream, through the viewer's grant: the video's HLS master playlist (its published
   * captions as WebVTT subtitle renditions), or the broadcast's playlist while live; null when none
   * (a video processed before ladders, until its backfill). `sources` stay as the progressive fallback.
   */
  hls: string | null;
  captions: Array<{ src: string; srclang: string; label: string; default: boolean }>;
  events: PageEvent[];
}

/** Everything a page shows, decided here; the HTML is rendered from it (src/web/pages.ts). */
export interface PageView {
  kind: PageKind;
  uuid: string;
  name: string;
  description: string | null;
  organizationName: string;
  watchUrl: string;
  embedUrl: string;
  poster: string | null;
  /** The poster at its stable address (/posters/<uuid>), for link previews and search engines. */
  sharePoster: string | null;
  /** Total seconds of the chapters' videos, when known. */
  duration: number | null;
  /** When the player was released (Unix seconds). */
  releasedAt: number;
  /** When it stops being shown (Unix seconds), if it does. */
  expiresAt: number | null;
  width: number;
  height: number;
  /** Frame ancestors allowed to embed the page; null: anyone (no list is set). */
  frameAncestors: string[] | null;
  sharingPage: boolean;
  shareLink: string | null;
  embedCode: string | null;
  approvalMessage: string | null;
  /** null: no chapter has an email gate; else whether this visitor has passed it (the gate's cookie). */
  emailGate: { passed: boolean } | null;
  settings: {
    autoplay: boolean;
    mute_onload: boolean;
    play_button: boolean;
    splash_screen_fade: boolean;
    playlist_always_open: boolean;
    default_hd: boolean;
    color: string;
    playlist_color: string | null;
    redirect_url: string | null;
    redirect_whole_page: boolean;
  };
  chapters: PageChapter[];
}

/** Why a page is not shown (the HTTP layer answers each reason with its status). */
export type RefusalReason =
  | 'not_found'
  | 'blocked'
  | 'not_released'
  | 'expired'
  | 'embedding_disabled'
  | 'embedding_not_allowed'
  | 'code_required'
  | 'code_used_up'
  | 'too_many_attempts';

/** A page not shown, with what the visitor is told. */
export interface Refusal {
  reason: RefusalReason;
  title: string;
  message: string;
  /** The visitor may type the access code (again). */
  askCode?: boolean;
}

export type PageOutcome =
  | { kind: 'page'; view: PageView }
  | { kind: 'refused'; refusal: Refusal }
  /** A correct access code: remember it (a cookie) and show the page. */
  | { kind: 'granted'; cookie: { name: string; value: string } };

export type GateOutcome =
  | { kind: 'refused'; refusal: Refusal }
  /** The player has no email gate. */
  | { kind: 'not_found' }
  /** The page as it is past the gate, and the cookie that keeps it passed. */
  | { kind: 'passed'; view: PageView; cookie: { name: string; value: string } };

export interface OembedQuery {
  url: string;
  maxwidth?: number;
  maxheight?: number;
}

export interface Oembed {
  version: '1.0';
  type: 'video';
  provider_name: string;
  provider_url: string;
  title: string;
  author_name: string;
  html: string;
  width: number;
  height: number;
  thumbnail_url?: string;
  thumbnail_width?: number;
  thumbnail_height?: number;
}

export type OembedOutcome = { kind: 'ok'; oembed: Oembed } | { kind: 'not_found' } | { kind: 'forbidden'; message: string };
