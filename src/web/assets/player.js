// @ts-check
/*
 * The Reelbase player of the watch and embed pages (docs/watch.md).
 *
 * - The controls are media-chrome's web components (/web/media-chrome.js, the pinned npm package)
 *   over the page's <video>: play, seek, volume, captions, quality (Auto and each rendition), speed,
 *   picture-in-picture, fullscreen and the keyboard shortcuts. This script gives them what a plain
 *   <video> lacks: the renditions of the adaptive stream (`videoRenditions`, the API media-chrome's
 *   quality menu reads), and whether a stream is live and seekable (`streamType`, `targetLiveWindow`).
 * - Streams: a chapter's adaptive HLS stream plays through hls.js (/web/hls.js) wherever it runs;
 *   the browser's own HLS only where hls.js cannot (iOS Safari), and a failure of the browser's own
 *   HLS (Chromium's on DVR broadcasts and early joins) moves on to hls.js. The progressive MP4 files
 *   are the last resort. Whatever fails, the viewer is told: never a black picture at 0:00.
 * - Chapters play in order, with an end screen (replay, next chapter) and a chapter list; each
 *   chapter resumes where this browser left it.
 * - Events show at their second: CTAs in sandboxed frames sized to their content, postrolls at a
 *   chapter's end, and the email gate, a card over the poster that holds playback. The chapters
 *   behind the gate come with no media in the page: the gate's POST answers them.
 * - Live: a LIVE badge, a seek bar with DVR, and before the broadcast a "starts at" panel that polls
 *   the page's chapters and starts playing by itself when the broadcast airs.
 * - Reports: views at 0/25/50/75/100 % of the chapter actually watched (seeking past a part does not
 *   count it), and attention per twentieth.
 *
 * Event HTML is the organization's own markup: it is shown in a sandboxed frame (an opaque origin: it
 * can reach neither this page nor its storage), which talks back only by postMessage. The page works
 * without this script too: the first chapter's video is in the HTML with the browser's controls.
 *
 * Type-checked through JSDoc (npx tsc -p tsconfig.assets.json); the globals it expects are in
 * types/web-assets.d.ts. Only comments carry the types: the file is served as it is.
 */

/**
 * The page's data: the JSON of <script id="reelbase-config">, written by configScript() in
 * src/web/pages.ts from the PageView of src/modules/watch/watch-view.ts. Keep the two in step.
 * @typedef {object} PlayerConfig
 * @property {'watch' | 'embed'} kind
 * @property {string} uuid The player's UUID.
 * @property {string} nonce The page's CSP nonce: for the event frames' script and for hls.js.
 * @property {boolean} [controlsLater] media-chrome is not in the page: loaded once the first frame shows.
 * @property {string | null} poster
 * @property {{ passed: boolean } | null} emailGate null: no chapter has an email gate.
 * @property {PlayerSettings} settings
 * @property {PlayerChapter[]} chapters In play order.
 */
/**
 * PageView['settings'].
 * @typedef {object} PlayerSettings
 * @property {boolean} autoplay
 * @property {boolean} mute_onload
 * @property {boolean} play_button
 * @property {boolean} splash_screen_fade
 * @property {boolean} playlist_always_open
 * @property {boolean} default_hd
 * @property {string} color
 * @property {string | null} playlist_color
 * @property {string | null} redirect_url
 * @property {boolean} redirect_whole_page
 */
/**
 * PageChapter.
 * @typedef {object} PlayerChapter
 * @property {number} position
 * @property {string} name
 * @property {string | null} description
 * @property {'ready' | 'live' | 'upcoming' | 'processing' | 'unavailable'} state
 * @property {boolean} gated Behind the email gate: no media until it is passed.
 * @property {number | null} gatedAt The gate opens at this second of the chapter, which plays up to it (its playlists end there).
 * @property {string | null} thumbnail
 * @property {number | null} duration
 * @property {{ status: string, air_date: number | null, dvr: boolean } | null} live
 * @property {Array<{ src: string, type: string, quality: string }>} sources The progressive files.
 * @property {string | null} hls The adaptive stream (or the broadcast's playlist).
 * @property {Array<{ src: string, srclang: string, label: string, default: boolean }>} captions
 * @property {PlayerEvent[]} events
 */
/**
 * PageEvent.
 * @typedef {object} PlayerEvent
 * @property {number} id
 * @property {EventType} event_type
 * @property {number} second -1: after the chapter ends (postroll).
 * @property {number | null} duration
 * @property {boolean} auto_close
 * @property {boolean} closeable
 * @property {boolean} fullscreen
 * @property {number | null} width
 * @property {string | null} html
 * @property {string | null} background_color
 */
/**
 * EVENT_TYPES of src/modules/events/events.schemas.ts (PageEvent types it as any string).
 * @typedef {'simple_post_roll' | 'simple_overlay' | 'simple_email' | 'fullscreen' | 'annotation' | 'marketo_form' | 'sharing_page_action' | 'vy_free_post_roll' | 'vy_free_on_pause'} EventType
 */
/**
 * An event on screen: its box in .rb-overlays and the sandboxed frame in it.
 * @typedef {{ event: PlayerEvent, box: HTMLDivElement, frame: HTMLIFrameElement }} ShownEvent
 */
/**
 * A report to POST /watch/:uuid/analytics: AnalyticsBeacon of src/modules/watch/watch.schemas.ts.
 * report() adds player_load_id, visitor_uuid and chapter.
 * @typedef {object} AnalyticsReport
 * @property {'load' | 'view' | 'attention_span' | 'cta_impression' | 'cta_click'} type
 * @property {WatchedPercent} [percent_watched]
 * @property {number[]} [buckets]
 * @property {Array<[number, number]>} [watched]
 * @property {number} [played_seconds]
 * @property {number} [event_id]
 * @property {number} [seq]
 * @property {string} [embed_url]
 * @property {string} [player_load_id]
 * @property {string} [visitor_uuid]
 * @property {number} [chapter]
 */
/** @typedef {0 | 25 | 50 | 75 | 100} WatchedPercent */
/**
 * A rendition as media-chrome's quality menu reads it (the `videoRenditions` API of media-tracks).
 * @typedef {{ id: string, width: number, height: number, bitrate: number, frameRate?: number, codec?: string, selected: boolean }} Rendition
 */
/** @typedef {'hls.js' | 'native' | 'mp4'} Engine */

(function () {
  'use strict';
  var configElement = document.getElementById('reelbase-config');
  var rootElement = /** @type {HTMLElement | null} */ (document.querySelector('[data-reelbase-player]'));
  if (!configElement || !rootElement) return;
  var root = rootElement;
  var config = /** @type {PlayerConfig} */ (JSON.parse(configElement.textContent || '{}'));
  var settings = config.settings;
  // The player markup (playerMarkup() in src/web/pages.ts) always has these.
  var video = /** @type {HTMLVideoElement} */ (root.querySelector('video'));
  var controller = /** @type {HTMLElement} */ (root.querySelector('media-controller'));
  var layer = /** @type {HTMLElement} */ (root.querySelector('.rb-layer'));
  var overlays = /** @type {HTMLElement} */ (root.querySelector('.rb-overlays'));
  var stateElement = /** @type {HTMLElement} */ (root.querySelector('.rb-state'));
  var liveBadge = /** @type {HTMLElement | null} */ (root.querySelector('.rb-live-badge'));
  var qualityItem = /** @type {HTMLElement | null} */ (root.querySelector('.rb-quality-item'));
  var chaptersNav = /** @type {HTMLElement | null} */ (document.querySelector('.rb-chapters'));
  var chaptersToggle = /** @type {HTMLElement | null} */ (root.querySelector('.rb-chapters-button'));
  var chapterButtons = /** @type {HTMLElement[]} */ (Array.prototype.slice.call(document.querySelectorAll('.rb-chapters [data-chapter]')));
  var accent = /^[0-9a-f]{3}([0-9a-f]{3})?$/i.test(settings.color || '') ? '#' + settings.color : '#2d6cdf';
  var HLS_TYPE = 'application/vnd.apple.mpegurl';
  /** Segments a live viewer plays behind the newest one listed (docs/watch.md, "Live latency"). */
  var HOLD_BACK = 1.75;

  var current = 0;
  /** Bumped by every start of a chapter's media: callbacks of an earlier one are ignored. */
  var generation = 0;
  /** @type {Record<string, ShownEvent>} by event id */
  var shown = {};
  /** @type {Record<string, boolean>} by event id */
  var dismissed = {};
  /** @type {number | null} the id of the email gate on screen */
  var gateOpen = null;
  var advanceWhenClear = false;
  var GATE_KEY = 'reelbase-email:' + config.uuid;

  // ---- Small helpers ----

  /**
   * An element with attributes and children (text is always set as text, never as markup).
   * @param {string} tag
   * @param {Record<string, string>} [attributes]
   * @param {Array<Node | string>} [children]
   * @returns {HTMLElement}
   */
  function el(tag, attributes, children) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      node.setAttribute(name, /** @type {Record<string, string>} */ (attributes)[name]);
    });
    (children || []).forEach(function (child) {
      node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    });
    return node;
  }

  /**
   * A button of the player's own panels; media-chrome leaves Enter and Space to it.
   * @param {string} label
   * @param {string} className
   * @param {() => void} onClick
   */
  function button(label, className, onClick) {
    var b = el('button', { type: 'button', class: 'rb-button ' + className, keysused: 'Enter Space' }, [label]);
    b.addEventListener('click', onClick);
    return b;
  }

  /** @param {number} seconds */
  function clock(seconds) {
    var s = Math.max(0, Math.round(seconds));
    var h = Math.floor(s / 3600);
    var m = Math.floor((s % 3600) / 60);
    var pad = function (/** @type {number} */ n) {
      return (n < 10 ? '0' : '') + n;
    };
    return h > 0 ? h + ':' + pad(m) + ':' + pad(s % 60) : m + ':' + pad(s % 60);
  }

  /**
   * @param {Storage | null} storage
   * @param {string} key
   */
  function readStored(storage, key) {
    try {
      return storage ? storage.getItem(key) : null;
    } catch (e) {
      return null;
    }
  }

  /**
   * @param {() => Storage} storage
   * @param {string} key
   * @param {string | null} value null: remove
   */
  function store(storage, key, value) {
    try {
      if (value === null) storage().removeItem(key);
      else storage().setItem(key, value);
    } catch (e) {
      /* storage refused (private mode, a sandboxed or third-party embed): nothing is remembered */
    }
  }
  var local = function () {
    return window.localStorage;
  };
  var session = function () {
    return window.sessionStorage;
  };
  /** @param {string} key */
  function localValue(key) {
    try {
      return readStored(window.localStorage, key);
    } catch (e) {
      return null;
    }
  }

  // ---- Reports to the organization's analytics webhooks (docs/webhooks.md) ----
  function newId() {
    if (window.crypto && window.crypto.randomUUID) return window.crypto.randomUUID();
    return Math.random().toString(36).slice(2) + Date.now().toString(36);
  }
  function visitorId() {
    var id = localValue('reelbase-visitor');
    if (!id) store(local, 'reelbase-visitor', (id = newId()));
    return id;
  }
  var loadId = newId();
  var visitor = visitorId();
  var pageUrl = config.kind === 'embed' && document.referrer ? document.referrer : window.location.href;
  var embedUrl = /^https?:\/\//i.test(pageUrl) ? pageUrl.slice(0, 2048) : undefined;
  /** @type {Partial<Record<WatchedPercent, boolean>>} */
  var viewed = {};

  /** @param {AnalyticsReport} body */
  function report(body) {
    body.player_load_id = loadId;
    body.visitor_uuid = visitor;
    body.chapter = current;
    try {
      window
        .fetch('/watch/' + config.uuid + '/analytics', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          keepalive: true,
          credentials: 'same-origin',
        })
        .catch(function () {});
    } catch (e) {
      /* reporting never gets in the way of watching */
    }
  }

  // The player was shown: what the play rate is counted against.
  /** @type {AnalyticsReport} */
  var loaded = { type: 'load' };
  if (embedUrl) loaded.embed_url = embedUrl;
  report(loaded);

  /** @param {WatchedPercent} percent */
  function reportView(percent) {
    if (viewed[percent]) return;
    viewed[percent] = true;
    /** @type {AnalyticsReport} */
    var body = { type: 'view', percent_watched: percent };
    if (embedUrl) body.embed_url = embedUrl;
    report(body);
  }

  // What was watched of the chapter in this load: the stretches of media time actually played
  // (merged), so that the view milestones count watching, not where a seek landed; and how often each
  // twentieth was watched (attention), sent when the chapter ends or is left. Everything played since
  // the last reading counts, so sparse timeupdates miss nothing; a seek starts a new stretch.
  var BUCKETS = 20;
  /** @type {Array<[number, number]>} */
  var watched = [];
  /** @type {number[] | null} */
  var buckets = null;
  var lastBucket = -1;
  /** @type {number | null} media time of the last reading of continuous playback */
  var playhead = null;
  /** Seconds of playback of the chapter in this load (what is watched again counts again). */
  var played = 0;
  /** Attention reports sent in this load: a chapter watched again is a new report, not a replay of the last. */
  var attentionSeq = 0;

  /**
   * @param {number} from
   * @param {number} to
   */
  function addWatched(from, to) {
    /** @type {Array<[number, number]>} */
    var merged = [];
    var start = from;
    var end = to;
    watched.forEach(function (stretch) {
      if (stretch[1] < start || stretch[0] > end) merged.push(stretch);
      else {
        start = Math.min(start, stretch[0]);
        end = Math.max(end, stretch[1]);
      }
    });
    merged.push([start, end]);
    watched = merged;
  }

  function watchedSeconds() {
    return watched.reduce(function (sum, stretch) {
      return sum + (stretch[1] - stretch[0]);
    }, 0);
  }

  /**
   * @param {number} t
   * @param {number} duration
   */
  function bucketOf(t, duration) {
    return Math.min(BUCKETS - 1, Math.floor((t / duration) * BUCKETS));
  }

  /** Counts what was played since the last reading, and reports the milestones reached. */
  function trackWatching() {
    var t = video.currentTime;
    var duration = video.duration;
    var rate = video.playbackRate || 1;
    var continuous = playhead !== null && t >= playhead && t - playhead <= Math.max(2, 1.5 * rate);
    if (duration && isFinite(duration)) {
      var from = continuous ? /** @type {number} */ (playhead) : t;
      var first = bucketOf(from, duration);
      var last = bucketOf(t, duration);
      if (!buckets) buckets = new Array(BUCKETS).fill(0);
      for (var i = first; i <= last; i++) {
        if (i !== lastBucket) buckets[i]++;
        lastBucket = i;
      }
      if (continuous && t > from) {
        addWatched(from, t);
        played += t - from;
      }
      var share = watchedSeconds() / duration;
      /** @type {WatchedPercent[]} */ ([25, 50, 75]).forEach(function (p) {
        if (share * 100 >= p) reportView(p);
      });
      // The last frames may be missed by the last reading: 97 % is the whole chapter.
      if (share >= 0.97) reportView(100);
    }
    playhead = t;
  }

  function flushAttention() {
    if (buckets) {
      var stretches = watched.slice(0, 500).map(function (s) {
        return /** @type {[number, number]} */ ([Math.round(s[0] * 10) / 10, Math.round(s[1] * 10) / 10]);
      });
      report({ type: 'attention_span', buckets: buckets, watched: stretches, played_seconds: Math.round(played * 10) / 10, seq: ++attentionSeq });
    }
    played = 0;
    buckets = null;
    lastBucket = -1;
    playhead = null;
    watched = [];
  }
  window.addEventListener('pagehide', function () {
    saveResume();
    flushAttention();
  });

  // ---- Messages over the picture ----
  var MESSAGES = {
    processing: 'This video is being processed. Try again in a moment.',
    unavailable: 'This video is not available.',
    failed: 'This video cannot be played right now. Try reloading the page.',
    live: 'This live broadcast cannot be played in this browser.',
    waiting: 'The broadcast is starting. It will play here in a moment.',
    gated: 'Enter your email address to watch this video.',
  };

  /** @param {string} text */
  function setState(text) {
    stateElement.textContent = text || '';
    stateElement.hidden = !text;
  }

  /** @param {string} name */
  function findPanel(name) {
    return /** @type {HTMLElement | null} */ (layer.querySelector('.' + name));
  }

  /**
   * Shows one of the player's own panels (before a broadcast, the end screen), built anew.
   * @param {string} name
   * @param {string} label
   * @param {Array<Node | string>} content
   */
  function showPanel(name, label, content) {
    hidePanel(name);
    var panel = el('div', { class: 'rb-panel ' + name, role: 'group', 'aria-label': label }, [el('div', { class: 'rb-panel-card' }, content)]);
    layer.appendChild(panel);
    return panel;
  }

  /** @param {string} name */
  function hidePanel(name) {
    var panel = findPanel(name);
    if (panel && panel.parentNode) panel.parentNode.removeChild(panel);
  }

  // ---- Playback ----
  function play() {
    var attempt = video.play();
    if (attempt && attempt.catch) {
      attempt.catch(function () {
        // Browsers refuse unmuted playback that no click started; muted playback is allowed.
        if (!video.muted) {
          video.muted = true;
          video.play().catch(function () {});
        }
      });
    }
  }

  // What media-chrome reads of the media beyond a plain <video>: the renditions of the adaptive
  // stream for the quality menu (selectedIndex -1 is Auto), and whether the stream is live (and
  // seekable: DVR). Defined before media-chrome upgrades its controller (player.js comes first).
  var renditionEvents = new EventTarget();
  var selectedRendition = -1;
  /** @type {Rendition[]} */
  var renditionItems = [];
  var renditionList = /** @type {any} */ ({
    get length() {
      return renditionItems.length;
    },
    get selectedIndex() {
      return selectedRendition;
    },
    set selectedIndex(index) {
      selectedRendition = index;
      renditionItems.forEach(function (r, i) {
        r.selected = i === index;
      });
      // -1 gives the choice back to hls.js's bandwidth estimate (Auto).
      if (hls) hls.nextLevel = index;
      renditionEvents.dispatchEvent(new Event('change'));
    },
    addEventListener: renditionEvents.addEventListener.bind(renditionEvents),
    removeEventListener: renditionEvents.removeEventListener.bind(renditionEvents),
    dispatchEvent: renditionEvents.dispatchEvent.bind(renditionEvents),
    [Symbol.iterator]: function () {
      return renditionItems[Symbol.iterator]();
    },
  });
  /** @param {Rendition[]} items */
  function setRenditions(items) {
    for (var i = 0; i < Math.max(items.length, renditionItems.length); i++) {
      if (i < items.length) renditionList[i] = items[i];
      else delete renditionList[i];
    }
    renditionItems = items;
    selectedRendition = -1;
    if (qualityItem) qualityItem.hidden = items.length < 2;
    renditionEvents.dispatchEvent(new Event(items.length ? 'addrendition' : 'removerendition'));
  }
  var streamType = 'on-demand';
  var liveWindow = Number.NaN;
  Object.defineProperty(video, 'videoRenditions', { configurable: true, get: () => renditionList });
  Object.defineProperty(video, 'streamType', { configurable: true, get: () => streamType });
  Object.defineProperty(video, 'targetLiveWindow', { configurable: true, get: () => liveWindow });

  /** @param {PlayerChapter} chapter */
  function setLive(chapter) {
    var live = chapter.state === 'live';
    var dvr = live && Boolean(chapter.live && chapter.live.dvr);
    streamType = live ? 'live' : 'on-demand';
    liveWindow = live ? (dvr ? Infinity : 0) : Number.NaN;
    root.classList.toggle('rb-live', live);
    root.classList.toggle('rb-dvr', dvr);
    if (liveBadge) liveBadge.hidden = !live;
    video.dispatchEvent(new Event('streamtypechange'));
    video.dispatchEvent(new Event('targetlivewindowchange'));
  }

  /** @type {import('hls.js').default | null} */
  var hls = null;
  /** @type {Engine | null} */
  var engine = null;
  /** The viewer (or autoplay) asked the chapter to play: an engine taking over goes on playing. */
  var playRequested = false;
  /** @type {Engine[]} the engines that failed for the chapter being played */
  var failed = [];
  /** @type {number | undefined} */
  var retryTimer;
  var mp4Index = 0;

  /** @param {Engine | null} name */
  function setEngine(name) {
    engine = name;
    if (name) root.setAttribute('data-engine', name);
    else root.removeAttribute('data-engine');
  }

  function hlsJsRuns() {
    return Boolean(window.Hls && window.Hls.isSupported());
  }

  /**
   * hls.js, loaded now if the page did not load it (or its first load failed), then `then`.
   * @param {() => void} then
   */
  function withHlsJs(then) {
    if (window.Hls) return then();
    var script = document.createElement('script');
    script.src = '/web/hls.js';
    script.nonce = config.nonce;
    script.onload = then;
    script.onerror = then;
    document.head.appendChild(script);
  }

  function teardown() {
    generation++;
    window.clearTimeout(retryTimer);
    if (hls) {
      hls.destroy();
      hls = null;
    }
    setEngine(null);
    setRenditions([]);
    root.removeAttribute('data-rendition');
    root.removeAttribute('data-bandwidth');
    while (video.firstChild) video.removeChild(video.firstChild);
    video.removeAttribute('src');
  }

  /**
   * The chapter's captions as <track>s: for the MP4 files, and for a stream whose playlist names
   * no subtitle renditions.
   * @param {PlayerChapter} chapter
   */
  function addTracks(chapter) {
    chapter.captions.forEach(function (caption) {
      var track = document.createElement('track');
      track.kind = 'subtitles';
      track.src = caption.src;
      track.srclang = caption.srclang;
      track.label = caption.label;
      track.default = caption.default;
      video.appendChild(track);
    });
  }

  /**
   * Plays the chapter's media with the best engine that has not failed for it yet.
   * @param {PlayerChapter} chapter
   * @param {number} startAt seconds; 0 from the start (a broadcast: its live edge)
   * @param {boolean} autoplay
   */
  function startMedia(chapter, startAt, autoplay) {
    teardown();
    if (autoplay) playRequested = true;
    var mine = generation;
    setLive(chapter);
    var stream = chapter.hls;
    if (stream && failed.indexOf('hls.js') < 0 && hlsJsRuns()) return startHlsJs(chapter, stream, startAt, autoplay);
    if (stream && failed.indexOf('native') < 0 && video.canPlayType(HLS_TYPE)) return startNative(chapter, stream, startAt, autoplay);
    if (stream && failed.indexOf('hls.js') < 0 && !window.Hls) {
      // hls.js did not load with the page: once more, then decide.
      return withHlsJs(function () {
        if (mine === generation) startMedia(chapter, startAt, autoplay);
      });
    }
    if (chapter.state === 'ready' && chapter.sources.length > mp4Index) return startMp4(chapter, startAt, autoplay);
    if (chapter.state === 'live') return waitForBroadcast(chapter, autoplay);
    setState(MESSAGES.failed);
  }

  /**
   * An engine failed: the next one takes over from where playback was.
   * @param {PlayerChapter} chapter
   * @param {Engine} which
   */
  function fallBack(chapter, which) {
    if (failed.indexOf(which) < 0) failed.push(which);
    var at = video.currentTime || pendingStart;
    startMedia(chapter, chapter.state === 'live' ? 0 : at, playRequested);
  }

  /**
   * A broadcast whose playlist cannot be read yet (joined before its first segment) or whose
   * stream failed: said so, and tried again every few seconds with every engine.
   * @param {PlayerChapter} chapter
   * @param {boolean} autoplay
   */
  function waitForBroadcast(chapter, autoplay) {
    setState(MESSAGES.waiting);
    var mine = generation;
    retryTimer = window.setTimeout(function () {
      if (mine !== generation) return;
      failed = [];
      startMedia(chapter, 0, autoplay || playRequested);
    }, 3000);
  }

  /** Where to start once the media's metadata is known (resume), for engines that cannot be told beforehand. */
  var pendingStart = 0;
  video.addEventListener('loadedmetadata', function () {
    if (pendingStart > 0 && engine !== 'hls.js' && isFinite(video.duration)) video.currentTime = pendingStart;
    pendingStart = 0;
  });

  /**
   * @param {PlayerChapter} chapter
   * @param {string} stream
   * @param {number} startAt
   * @param {boolean} autoplay
   */
  function startHlsJs(chapter, stream, startAt, autoplay) {
    var Hls = /** @type {NonNullable<Window['Hls']>} */ (window.Hls);
    var live = chapter.state === 'live';
    setEngine('hls.js');
    // No worker: the page's CSP allows scripts from this origin only, not from blob: URLs.
    var instance = new Hls({
      enableWorker: false,
      // Auto: start on the rung a 1 Mbit/s estimate allows, at once, rather than first fetching a
      // segment of the lowest rung to measure (testBandwidth: a playlist and a segment more before
      // the first frame, ~0.4 s here); the estimate then follows the segments as they come.
      startLevel: -1,
      testBandwidth: false,
      abrEwmaDefaultEstimate: 1e6,
      capLevelToPlayerSize: true,
      startPosition: startAt > 0 ? startAt : -1,
      liveDurationInfinity: live,
      // Live: HOLD_BACK segments behind the newest (hls.js's default is 3), and a slightly faster pace
      // when the player falls behind that, rather than a jump (docs/watch.md, "Live latency").
      liveSyncDurationCount: HOLD_BACK,
      liveMaxLatencyDurationCount: HOLD_BACK + 4,
      maxLiveSyncPlaybackRate: 1.1,
    });
    hls = instance;
    var mediaRecoveries = 0;
    instance.on(Hls.Events.MANIFEST_PARSED, function () {
      setState('');
      setRenditions(
        instance.levels.map(function (level, index) {
          return {
            id: String(index),
            width: level.width,
            height: level.height,
            bitrate: level.bitrate,
            frameRate: level.frameRate,
            codec: level.videoCodec,
            selected: false,
          };
        }),
      );
      if (instance.allSubtitleTracks.length === 0) addTracks(chapter);
    });
    instance.on(Hls.Events.LEVEL_SWITCHED, function (_event, data) {
      var level = instance.levels[data.level];
      if (!level) return;
      root.setAttribute('data-rendition', level.height + 'p');
      root.setAttribute('data-bandwidth', String(level.bitrate));
    });
    instance.on(Hls.Events.ERROR, function (_event, data) {
      if (!data.fatal || instance !== hls) return;
      if (data.type === Hls.ErrorTypes.MEDIA_ERROR && mediaRecoveries < 2) {
        mediaRecoveries++;
        instance.recoverMediaError();
        return;
      }
      if (live) return waitForBroadcast(chapter, playRequested);
      fallBack(chapter, 'hls.js');
    });
    instance.loadSource(stream);
    instance.attachMedia(video);
    if (autoplay) play();
  }

  /**
   * @param {PlayerChapter} chapter
   * @param {string} stream
   * @param {number} startAt
   * @param {boolean} autoplay
   */
  function startNative(chapter, stream, startAt, autoplay) {
    setEngine('native');
    pendingStart = startAt;
    video.src = stream;
    var mine = generation;
    video.addEventListener(
      'loadedmetadata',
      function () {
        if (mine !== generation || chapter.state === 'live') return;
        var named = Array.prototype.some.call(video.textTracks, function (/** @type {TextTrack} */ t) {
          return t.kind === 'subtitles' || t.kind === 'captions';
        });
        if (!named) addTracks(chapter);
      },
      { once: true },
    );
    video.load();
    if (autoplay) play();
  }

  /**
   * @param {PlayerChapter} chapter
   * @param {number} startAt
   * @param {boolean} autoplay
   */
  function startMp4(chapter, startAt, autoplay) {
    setEngine('mp4');
    pendingStart = startAt;
    video.src = chapter.sources[mp4Index].src;
    addTracks(chapter);
    video.load();
    if (autoplay) play();
  }

  video.addEventListener('error', function () {
    var chapter = config.chapters[current];
    if (!chapter) return;
    // The browser's own HLS failed (Chromium's on DVR broadcasts and early joins): hls.js takes over.
    if (engine === 'native') return fallBack(chapter, 'native');
    if (engine === 'mp4') {
      mp4Index++;
      if (chapter.sources.length > mp4Index) return startMp4(chapter, video.currentTime || pendingStart, playRequested);
      setEngine(null);
      setState(MESSAGES.failed);
    }
  });

  // ---- Resume: where this browser left each chapter ----
  /** @param {number} index */
  function resumeKey(index) {
    return 'reelbase-resume:' + config.uuid + ':' + index;
  }
  var lastSaved = 0;
  function saveResume() {
    var chapter = config.chapters[current];
    if (!chapter || chapter.state !== 'ready' || engine === null) return;
    var t = video.currentTime;
    var duration = video.duration;
    if (!duration || !isFinite(duration)) return;
    // Near the start or the end there is nothing to resume.
    store(local, resumeKey(current), t >= 5 && t < duration - 10 && t < duration * 0.95 ? String(Math.floor(t)) : null);
  }
  /** @param {PlayerChapter} chapter */
  function resumePoint(chapter) {
    var saved = Number(localValue(resumeKey(current)));
    if (!saved || !isFinite(saved) || saved < 5) return 0;
    if (chapter.duration && (saved >= chapter.duration - 10 || saved >= chapter.duration * 0.95)) return 0;
    return saved;
  }
  video.addEventListener('pause', saveResume);

  /** @param {number} at */
  function showResumed(at) {
    hidePanel('rb-toast');
    var toast = el('div', { class: 'rb-toast', role: 'status' }, [
      'Resumed at ' + clock(at),
      button('Start over', 'rb-start-over', function () {
        hidePanel('rb-toast');
        video.currentTime = 0;
        playhead = null;
      }),
    ]);
    layer.appendChild(toast);
    window.setTimeout(function () {
      if (toast.parentNode) toast.parentNode.removeChild(toast);
    }, 6000);
  }

  // ---- Events: CTAs, postrolls and the email gate ----

  // What runs inside an event's frame: the email gate's submit and the close buttons are reported to
  // the player; the frame reports its content's height whenever it changes (so the box fits it, even
  // where the frame is laid out late, as in a third-party iframe); links open outside the frame.
  var FRAME_SCRIPT =
    "(function(){function post(m){parent.postMessage(m,'*');}" +
    "function gate(){return document.querySelector('form[data-reelbase-event=email_gate]');}" +
    "document.addEventListener('submit',function(e){var f=e.target;if(!f||f.getAttribute('data-reelbase-event')!=='email_gate')return;e.preventDefault();" +
    "var i=f.querySelector('input[type=email],input[name=email]');var v=i?i.value.trim():'';" +
    "if(!/^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$/.test(v)){if(i){i.setCustomValidity('Enter a valid email address');i.reportValidity();i.setCustomValidity('');}return;}" +
    "var b=f.querySelector('[type=submit]');if(b)b.disabled=true;post({type:'email',email:v});},true);" +
    "window.addEventListener('message',function(e){var d=e.data;if(e.source!==parent||!d||d.type!=='gate-error')return;var f=gate();if(!f)return;" +
    "var b=f.querySelector('[type=submit]');if(b)b.disabled=false;var p=f.querySelector('.reelbase-email-gate__error');" +
    "if(!p){p=document.createElement('p');p.className='reelbase-email-gate__error';p.setAttribute('role','alert');f.appendChild(p);}p.textContent=String(d.message||'');});" +
    "document.addEventListener('click',function(e){var t=e.target&&e.target.closest&&e.target.closest('[data-reelbase-close]');if(t){e.preventDefault();post({type:'close'});return;}" +
    "var a=e.target&&e.target.closest&&e.target.closest('a[href]');if(a)post({type:'click'});});" +
    "function size(){var h=Math.ceil(document.documentElement.getBoundingClientRect().height);if(h>0)post({type:'size',height:h});}" +
    'if(window.ResizeObserver)new ResizeObserver(size).observe(document.documentElement);' +
    "window.addEventListener('load',size);size();})();";

  /** @param {PlayerEvent} event */
  function frameDocument(event) {
    var background = /^#?[0-9a-f]{3,8}$/i.test(event.background_color || '') ? /** @type {string} */ (event.background_color).replace(/^#?/, '#') : '#fff';
    var gate = event.event_type === 'simple_email';
    var styles =
      'html,body{margin:0}body{padding:' +
      (gate ? '22px 24px 24px' : '14px 16px') +
      ';font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:' +
      background +
      '}a{color:' +
      accent +
      '}img{max-width:100%;height:auto}.rb-content>:first-child{margin-top:0}.rb-content>:last-child{margin-bottom:0}' +
      // The default email gate's form (emailGateHtml() in src/modules/ctas/ctas.service.ts).
      '.reelbase-email-gate{display:flex;flex-direction:column;gap:10px}' +
      '.reelbase-email-gate__title{margin:0 0 4px;font-size:21px;line-height:1.25}' +
      '.reelbase-email-gate__label{font-size:13px;font-weight:600;color:#3f4754}' +
      '.reelbase-email-gate__input{width:100%;box-sizing:border-box;padding:11px 12px;font:inherit;border:1px solid #b9c0cb;border-radius:8px}' +
      '.reelbase-email-gate__input:focus{outline:2px solid ' +
      accent +
      ';outline-offset:1px}' +
      '.reelbase-email-gate__submit{padding:12px 14px;border:0;border-radius:8px;background:' +
      accent +
      ';color:#fff;font:600 15px/1.2 system-ui,sans-serif;cursor:pointer}' +
      '.reelbase-email-gate__submit:disabled{opacity:.6;cursor:progress}' +
      '.reelbase-email-gate__skip{align-self:center;padding:4px 8px;border:0;background:none;color:#3f4754;text-decoration:underline;font:inherit;cursor:pointer}' +
      '.reelbase-email-gate__error{margin:0;color:#b42318;font-size:14px}';
    return (
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><base target="_blank"><style>' +
      styles +
      '</style></head><body><div class="rb-content">' +
      (event.html || '') +
      '</div>' +
      '<script nonce="' +
      config.nonce +
      '">' +
      FRAME_SCRIPT +
      '</' +
      'script></body></html>'
    );
  }

  /** @param {PlayerEvent} event */
  function covers(event) {
    return event.fullscreen || event.event_type === 'simple_email' || event.event_type === 'fullscreen';
  }

  function gatePassed() {
    return Boolean(config.emailGate && config.emailGate.passed);
  }

  /** @param {PlayerEvent} event */
  function show(event) {
    if (shown[event.id]) return;
    var isGate = event.event_type === 'simple_email';
    if (isGate && gatePassed()) {
      dismissed[event.id] = true;
      return;
    }
    var box = /** @type {HTMLDivElement} */ (
      el('div', { class: 'rb-overlay' + (isGate ? ' rb-gate rb-sized' : covers(event) ? ' rb-fullscreen rb-sized' : '') })
    );
    box.setAttribute('data-event-id', String(event.id));
    var frame = /** @type {HTMLIFrameElement} */ (el('iframe', { title: isGate ? 'Email gate' : 'Call to action' }));
    frame.setAttribute('sandbox', 'allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox');
    frame.srcdoc = frameDocument(event);
    var holder = box;
    if (isGate) {
      holder = /** @type {HTMLDivElement} */ (el('div', { class: 'rb-gate-card', role: 'dialog', 'aria-modal': 'true', 'aria-label': 'Email gate' }));
      box.appendChild(holder);
      frame.style.height = '260px';
    } else if (!covers(event)) {
      box.style.width = (event.width || 300) + 'px';
      // Until the frame reports its content's height; shown then (or after a while, if it never does).
      window.setTimeout(function () {
        if (!box.classList.contains('rb-sized')) {
          box.style.height = '120px';
          box.classList.add('rb-sized');
        }
      }, 2000);
    }
    holder.appendChild(frame);
    var closeable = isGate ? event.closeable : true;
    if (closeable) {
      var close = el('button', { type: 'button', class: 'rb-close', 'aria-label': 'Close', keysused: 'Enter Space' }, ['\u00d7']);
      close.addEventListener('click', function () {
        dismiss(event.id);
      });
      holder.appendChild(close);
    }
    overlays.appendChild(box);
    shown[event.id] = { event: event, box: box, frame: frame };
    if (!isGate) report({ type: 'cta_impression', event_id: event.id });
    if (isGate) {
      gateOpen = event.id;
      video.pause();
      holdControls(true);
    }
  }

  /**
   * While the email gate is open the controls under it cannot be reached (nor played from).
   * @param {boolean} held
   */
  function holdControls(held) {
    // Nor by the keyboard: play, seek, and picture-in-picture (whose window has a play button).
    if (held) controller.setAttribute('hotkeys', 'nospace nok noj nol noarrowleft noarrowright nop');
    else controller.removeAttribute('hotkeys');
    Array.prototype.forEach.call(
      root.querySelectorAll('.rb-bottom, media-settings-menu, media-captions-menu, .rb-play'),
      function (/** @type {HTMLElement} */ e) {
        e.inert = held;
      },
    );
  }

  /** @param {number} id */
  function hide(id) {
    var entry = shown[id];
    if (!entry) return;
    // Boxes stay in .rb-overlays for as long as they are in `shown`.
    /** @type {ParentNode} */ (entry.box.parentNode).removeChild(entry.box);
    delete shown[id];
    if (gateOpen === id) {
      gateOpen = null;
      holdControls(false);
    }
    if (advanceWhenClear && Object.keys(shown).length === 0) {
      advanceWhenClear = false;
      chapterEnded();
    }
  }

  /** @param {number} id */
  function dismiss(id) {
    dismissed[id] = true;
    var wasGate = gateOpen === id;
    hide(id);
    if (wasGate && !video.ended) play();
  }

  function clearOverlays() {
    advanceWhenClear = false;
    Object.keys(shown).forEach(function (id) {
      var entry = shown[id];
      /** @type {ParentNode} */ (entry.box.parentNode).removeChild(entry.box);
    });
    shown = {};
    gateOpen = null;
    holdControls(false);
  }

  /** The gate that holds the chapters behind it: the first email gate of the player that cannot be skipped. */
  function firstGate() {
    for (var i = 0; i < config.chapters.length; i++) {
      var gate = config.chapters[i].events.filter(function (e) {
        return e.event_type === 'simple_email' && !e.closeable;
      })[0];
      if (gate) return gate;
    }
    return null;
  }

  /**
   * An address was given at the gate: the server reports it and answers the chapters with their
   * media (and a cookie keeps the gate passed); then playback goes on.
   * @param {ShownEvent} entry
   * @param {string} email
   */
  function passGate(entry, email) {
    /** @param {string} text */
    function refuse(text) {
      if (entry.frame.contentWindow) entry.frame.contentWindow.postMessage({ type: 'gate-error', message: text }, '*');
    }
    /** @type {Record<string, unknown>} */
    var body = { email: email.slice(0, 254), chapter: current, player_load_id: loadId, visitor_uuid: visitor };
    if (embedUrl) body.embed_url = embedUrl;
    window
      .fetch('/' + config.kind + '/' + config.uuid + '/gate', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        credentials: 'same-origin',
      })
      .then(function (response) {
        if (!response.ok) {
          refuse(response.status === 422 ? 'Enter a valid email address.' : 'That did not work. Please try again.');
          return;
        }
        return response.json().then(function (/** @type {{ chapters: PlayerChapter[], emailGate: PlayerConfig['emailGate'] }} */ answer) {
          var was = config.chapters[current];
          var wasGated = Boolean(was && was.gated);
          // A chapter cut at the gate: its whole stream now, from where the viewer is.
          var wasCut = Boolean(was && was.gatedAt !== null && was.gatedAt !== undefined);
          config.chapters = answer.chapters;
          config.emailGate = answer.emailGate || { passed: true };
          store(session, GATE_KEY, email);
          root.dispatchEvent(new CustomEvent('reelbase:email', { detail: { email: email }, bubbles: true }));
          dismissed[entry.event.id] = true;
          hide(entry.event.id);
          if (wasGated) load(current, true);
          else if (wasCut) load(current, true, video.currentTime);
          else if (!video.ended) play();
        });
      })
      .catch(function () {
        refuse('No connection. Please try again.');
      });
  }

  window.addEventListener('message', function (e) {
    var message = e.data;
    if (!message || typeof message !== 'object') return;
    Object.keys(shown).forEach(function (id) {
      var entry = shown[id];
      if (entry.frame.contentWindow !== e.source) return;
      var height = Math.min(Math.max(Number(message.height) || 0, 1), 2000);
      if (message.type === 'size' && entry.event.event_type === 'simple_email') {
        entry.frame.style.height = height + 'px';
      } else if (message.type === 'size' && !covers(entry.event)) {
        entry.box.style.height = height + 'px';
        entry.box.classList.add('rb-sized');
      } else if (message.type === 'close') {
        dismiss(entry.event.id);
      } else if (message.type === 'click' && entry.event.event_type !== 'simple_email') {
        report({ type: 'cta_click', event_id: entry.event.id });
      } else if (message.type === 'email' && entry.event.event_type === 'simple_email' && typeof message.email === 'string') {
        passGate(entry, message.email);
      }
    });
  });

  // ---- Chapters ----

  /** @param {PlayerChapter} chapter */
  function posterOf(chapter) {
    return chapter.thumbnail || config.poster || '';
  }

  /**
   * @param {number} index
   * @param {boolean} autoplay
   * @param {number} [startAt] where to start (else the saved resume point)
   */
  function load(index, autoplay, startAt) {
    saveResume();
    flushAttention();
    viewed = {};
    clearOverlays();
    hidePanel('rb-end');
    hidePanel('rb-upcoming');
    hidePanel('rb-toast');
    window.clearInterval(countdownTimer);
    window.clearTimeout(pollTimer);
    dismissed = {};
    failed = [];
    mp4Index = 0;
    playRequested = false;
    current = index;
    var chapter = config.chapters[index];
    chapterButtons.forEach(function (b) {
      b.setAttribute('aria-current', String(Number(b.getAttribute('data-chapter')) === index));
    });
    teardown();
    var poster = chapter ? posterOf(chapter) : '';
    if (poster) video.poster = poster;
    else video.removeAttribute('poster');
    setState('');
    if (!chapter) {
      root.classList.add('rb-idle');
      setState('This player has no videos yet.');
      return;
    }
    setLive(chapter);
    // Nothing to play (yet): no controls.
    root.classList.toggle('rb-idle', chapter.gated || (chapter.state !== 'ready' && chapter.state !== 'live'));
    if (chapter.state === 'upcoming') return showUpcoming(chapter);
    if (chapter.state !== 'ready' && chapter.state !== 'live') {
      setState(MESSAGES[/** @type {'processing' | 'unavailable'} */ (chapter.state)]);
      video.load();
      return;
    }
    if (chapter.gated) {
      var gate = firstGate();
      if (gate && !gatePassed()) show(gate);
      else setState(MESSAGES.gated);
      video.load();
      return;
    }
    var given = typeof startAt === 'number';
    var at = given ? /** @type {number} */ (startAt) : chapter.state === 'ready' ? resumePoint(chapter) : 0;
    startMedia(chapter, at, autoplay);
    if (at > 0 && !given) showResumed(at);
  }

  function finish() {
    var target = settings.redirect_url;
    if (!target || !/^https?:\/\//i.test(target)) return false;
    try {
      // window.top is null only in a detached frame: then this throws, as the catch expects.
      /** @type {Window} */ (settings.redirect_whole_page ? window.top : window).location.href = target;
    } catch (e) {
      window.location.href = target;
    }
    return true;
  }

  // The end screen: the next chapter (which starts by itself after a short countdown) or, after
  // the last one, the player's redirect or a replay.
  var COUNTDOWN = 5;
  /** @type {number | undefined} */
  var countdownTimer;
  function chapterEnded() {
    var nextIndex = current + 1 < config.chapters.length ? current + 1 : -1;
    if (nextIndex < 0 && finish()) return;
    var chapter = config.chapters[current];
    var focusInside = root.contains(document.activeElement);
    clearOverlays();
    var replay = button('Replay', nextIndex < 0 ? 'rb-primary rb-replay' : 'rb-replay', function () {
      load(current, true);
    });
    var panel;
    if (nextIndex >= 0) {
      var next = config.chapters[nextIndex];
      var left = COUNTDOWN;
      var status = el('p', { class: 'rb-countdown', 'aria-live': 'polite' }, ['Starts in ' + left + ' s']);
      var playNext = button('Play next', 'rb-primary rb-next', function () {
        load(nextIndex, true);
      });
      var cancel = button('Cancel', 'rb-quiet rb-cancel', function () {
        window.clearInterval(countdownTimer);
        status.textContent = '';
        if (cancel.parentNode) cancel.parentNode.removeChild(cancel);
      });
      /** @type {Array<Node | string>} */
      var content = [el('span', { class: 'rb-kicker' }, ['Up next'])];
      if (next.thumbnail) content.push(el('img', { class: 'rb-next-thumb', src: next.thumbnail, alt: '' }));
      content.push(el('h2', {}, [next.name]), status, el('div', { class: 'rb-actions' }, [playNext, replay, cancel]));
      panel = showPanel('rb-end', 'Chapter ended', content);
      countdownTimer = window.setInterval(function () {
        left--;
        if (left > 0) status.textContent = 'Starts in ' + left + ' s';
        else load(nextIndex, true);
      }, 1000);
      if (focusInside) playNext.focus();
    } else {
      /** @type {HTMLElement[]} */
      var actions = [replay];
      if (config.chapters.length > 1) {
        actions.push(
          button('Watch from the start', 'rb-restart', function () {
            load(0, true);
          }),
        );
      }
      panel = showPanel('rb-end', 'Video ended', [
        el('span', { class: 'rb-kicker' }, ['Finished']),
        el('h2', {}, [chapter ? chapter.name : '']),
        el('div', { class: 'rb-actions' }, actions),
      ]);
      if (focusInside) replay.focus();
    }
    return panel;
  }

  // ---- Live: before the broadcast ----
  /** @type {number | undefined} */
  var pollTimer;

  /** @param {number} seconds */
  function untilText(seconds) {
    if (seconds <= 0) return 'Starting any moment now.';
    var d = Math.floor(seconds / 86400);
    var h = Math.floor((seconds % 86400) / 3600);
    var m = Math.ceil((seconds % 3600) / 60);
    if (m === 60) {
      h++;
      m = 0;
    }
    return 'In ' + (d ? d + ' d ' : '') + (d || h ? h + ' h ' : '') + (d ? '' : m + ' min');
  }

  /** @param {PlayerChapter} chapter */
  function showUpcoming(chapter) {
    var at = chapter.live && chapter.live.air_date ? new Date(chapter.live.air_date * 1000) : null;
    var when = at
      ? 'Starts at ' + new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short', hour: 'numeric', minute: '2-digit' }).format(at)
      : 'Starts soon';
    var until = el('p', { class: 'rb-until' }, [at ? untilText((at.getTime() - Date.now()) / 1000) : '']);
    showPanel('rb-upcoming', 'Upcoming live broadcast', [
      el('span', { class: 'rb-kicker' }, ['Upcoming live']),
      el('h2', {}, [when]),
      until,
      el('p', {}, ['It will start playing here by itself.']),
    ]);
    window.clearInterval(countdownTimer);
    if (at) {
      var airs = at;
      countdownTimer = window.setInterval(function () {
        until.textContent = untilText((airs.getTime() - Date.now()) / 1000);
      }, 15000);
    }
    schedulePoll(chapter);
  }

  /** @param {PlayerChapter} chapter */
  function schedulePoll(chapter) {
    var airDate = chapter.live && chapter.live.air_date ? chapter.live.air_date * 1000 : null;
    var away = airDate === null ? 0 : airDate - Date.now();
    // Often near (or past) the announced time, rarely when it is far.
    var delay = airDate === null ? 10000 : away > 3600000 ? 60000 : away > 600000 ? 20000 : 5000;
    window.clearTimeout(pollTimer);
    pollTimer = window.setTimeout(poll, delay);
  }

  // The page's chapters again (the same rules as the page, new grants), while a broadcast has not started.
  function poll() {
    var index = current;
    window
      .fetch('/' + config.kind + '/' + config.uuid + '/chapters', { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (response) {
        return response.ok ? response.json() : null;
      })
      .then(function (/** @type {{ chapters: PlayerChapter[], emailGate: PlayerConfig['emailGate'] } | null} */ answer) {
        if (index !== current) return;
        var chapter = answer && answer.chapters[index];
        if (!answer || !chapter) return schedulePoll(config.chapters[index]);
        config.chapters = answer.chapters;
        config.emailGate = answer.emailGate;
        updateBadges();
        if (chapter.state === 'upcoming') return schedulePoll(chapter);
        load(index, true);
      })
      .catch(function () {
        if (index === current) schedulePoll(config.chapters[index]);
      });
  }

  /** The chapter list's badges (live, upcoming, length) after the chapters were read again. */
  function updateBadges() {
    chapterButtons.forEach(function (b) {
      var chapter = config.chapters[Number(b.getAttribute('data-chapter'))];
      var badge = b.querySelector('.rb-badge, .rb-duration');
      var spoken = b.querySelector('.rb-badge-text');
      if (!chapter || !badge) return;
      badge.className = chapter.state === 'live' ? 'rb-badge rb-badge-live' : chapter.state === 'upcoming' ? 'rb-badge' : 'rb-duration';
      badge.textContent = chapter.state === 'live' ? 'Live' : chapter.state === 'upcoming' ? 'Upcoming' : chapter.duration ? clock(chapter.duration) : '';
      if (spoken) spoken.textContent = badge.textContent ? ', ' + badge.textContent.toLowerCase() : '';
    });
  }

  // ---- Media events ----
  video.addEventListener('timeupdate', function () {
    var chapter = config.chapters[current];
    if (!chapter) return;
    var t = video.currentTime;
    if (!video.paused) trackWatching();
    if (Date.now() - lastSaved > 5000) {
      lastSaved = Date.now();
      saveResume();
    }
    chapter.events.forEach(function (event) {
      if (event.second < 0) return;
      var end = event.auto_close && event.duration !== null ? event.second + event.duration : Infinity;
      var active = t >= event.second && t < end;
      if (active && !dismissed[event.id]) show(event);
      else if (!active && shown[event.id] && gateOpen !== event.id) hide(event.id);
    });
  });

  video.addEventListener('seeking', function () {
    playhead = null;
  });

  video.addEventListener('play', function () {
    // The email gate holds playback until it is answered (or skipped, where it may be).
    if (gateOpen !== null) return video.pause();
    playRequested = true;
    hidePanel('rb-end');
    window.clearInterval(countdownTimer);
    playhead = video.currentTime;
    reportView(0);
  });

  video.addEventListener('playing', function () {
    setState('');
  });

  video.addEventListener('ended', function () {
    trackWatching();
    flushAttention();
    store(local, resumeKey(current), null);
    var chapter = config.chapters[current];
    var postrolls = (chapter ? chapter.events : []).filter(function (event) {
      return event.second < 0 && !dismissed[event.id];
    });
    if (postrolls.length === 0) return chapterEnded();
    advanceWhenClear = true;
    postrolls.forEach(show);
    if (Object.keys(shown).length === 0) {
      advanceWhenClear = false;
      chapterEnded();
    }
  });

  // ---- The chapter list ----
  chapterButtons.forEach(function (b) {
    b.addEventListener('click', function () {
      load(Number(b.getAttribute('data-chapter')), true);
    });
  });
  if (chaptersToggle && chaptersNav) {
    var nav = chaptersNav;
    var toggle = chaptersToggle;
    toggle.addEventListener('click', function () {
      nav.hidden = !nav.hidden;
      toggle.setAttribute('aria-expanded', String(!nav.hidden));
    });
  }

  // media-chrome focuses the checked item of a submenu when its selection changes (a rendition
  // chosen, say), even while the settings menu is closed: the focus then sits in a hidden menu, which
  // takes the viewer's keys (seen in Chromium 156). It goes back to the player.
  root.addEventListener('focusin', function (e) {
    var menu = /** @type {HTMLElement | null} */ (root.querySelector('media-settings-menu'));
    var target = /** @type {Node | null} */ (e.target);
    if (menu && menu.hidden && target && menu !== target && menu.contains(target)) controller.focus({ preventScroll: true });
  });

  // ---- Keyboard shortcuts ----
  // media-chrome answers them while the focus is in the player (space/k, j/l and the arrows, m, f,
  // c, < and > for the speed, p for picture-in-picture, and ? for the list). On the watch page they
  // also work while nothing else has the focus (not the up and down arrows there, which scroll the
  // page). While an email gate is open, those that would play on are off (holdControls).
  var SHORTCUTS = [' ', 'k', 'j', 'l', 'm', 'f', 'c', '<', '>', 'p', 'ArrowLeft', 'ArrowRight'];
  /** @param {KeyboardEvent} e */
  function unfocused(e) {
    return (e.target === document.body || e.target === document.documentElement) && !e.metaKey && !e.ctrlKey && !e.altKey && SHORTCUTS.indexOf(e.key) >= 0;
  }
  document.addEventListener('keydown', function (e) {
    if (unfocused(e)) e.preventDefault();
  });
  document.addEventListener('keyup', function (e) {
    var handler = /** @type {{ keyboardShortcutHandler?: (e: KeyboardEvent) => void }} */ (/** @type {unknown} */ (controller)).keyboardShortcutHandler;
    if (unfocused(e) && handler) handler.call(controller, e);
  });

  // ---- Start ----
  if (window.customElements) {
    window.customElements.whenDefined('media-controller').then(function () {
      // media-chrome's controls replace the browser's.
      video.removeAttribute('controls');
    });
  }
  if (settings.splash_screen_fade) root.classList.add('rb-splash-fade');
  if (settings.mute_onload) video.muted = true;
  if (qualityItem) qualityItem.hidden = true;
  load(0, settings.autoplay);

  // A page that plays by itself gets media-chrome's controls once its first frame shows (or after
  // 2 s, or at the viewer's first touch), so that their set-up does not delay that frame.
  if (config.controlsLater) {
    var controlsAsked = false;
    var loadControls = function () {
      if (controlsAsked) return;
      controlsAsked = true;
      var script = document.createElement('script');
      script.src = '/web/media-chrome.js';
      script.nonce = config.nonce;
      document.body.appendChild(script);
    };
    video.addEventListener('playing', loadControls, { once: true });
    root.addEventListener('pointerdown', loadControls, { once: true });
    root.addEventListener('keydown', loadControls, { once: true });
    window.setTimeout(loadControls, 2000);
  }
})();
