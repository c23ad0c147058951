// @ts-check
/*
 * The Reelbase player of the watch and embed pages: chapters played in order, call-to-actions and
 * other events shown at their second (postrolls when a chapter ends), the email gate, and the
 * player's settings. Event HTML is the organization's own markup: it is shown in a sandboxed frame
 * (an opaque origin: it can reach neither this page nor its storage), which talks back only by
 * postMessage. The page works without this script too: the first chapter's video is in the HTML.
 *
 * Type-checked through JSDoc (npx tsc -p tsconfig.assets.json); the globals it expects are in
 * types/web-assets.d.ts. Only comments carry the types: the file is served as it is.
 */

/**
 * The page's data: the JSON of <script id="reelbase-config">, written by configScript() in
 * src/web/pages.ts from the PageView of src/modules/watch/watch.service.ts. Keep the two in step.
 * @typedef {object} PlayerConfig
 * @property {'watch' | 'embed'} kind
 * @property {string} uuid The player's UUID.
 * @property {string} nonce The page's CSP nonce: for the event frames' script and for hls.js.
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
 * @property {'ready' | 'live' | 'processing' | 'unavailable'} state ready: sources play; live: the
 *   broadcast over HLS; processing / unavailable: nothing to play yet.
 * @property {Array<{ src: string, type: string, quality: string }>} sources
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
 * @property {'view' | 'identified_view' | 'attention_span'} type
 * @property {WatchedPercent} [percent_watched]
 * @property {string} [email]
 * @property {number[]} [buckets]
 * @property {string} [embed_url]
 * @property {string} [player_load_id]
 * @property {string} [visitor_uuid]
 * @property {number} [chapter]
 */
/** @typedef {0 | 25 | 50 | 75 | 100} WatchedPercent */

(function () {
  'use strict';
  var configElement = document.getElementById('reelbase-config');
  var root = document.querySelector('[data-reelbase-player]');
  if (!configElement || !root) return;
  var config = /** @type {PlayerConfig} */ (JSON.parse(configElement.textContent));
  var settings = config.settings;
  // The player markup (playerMarkup() in src/web/pages.ts) always has these three.
  var video = /** @type {HTMLVideoElement} */ (root.querySelector('video'));
  var overlays = /** @type {HTMLElement} */ (root.querySelector('.rb-overlays'));
  var stateElement = /** @type {HTMLElement} */ (root.querySelector('.rb-state'));
  var chapterButtons = /** @type {Element[]} */ (Array.prototype.slice.call(document.querySelectorAll('.rb-chapters [data-chapter]')));
  var current = 0;
  /** @type {Record<string, ShownEvent>} by event id */
  var shown = {};
  /** @type {Record<string, boolean>} by event id */
  var dismissed = {};
  /** @type {number | null} the id of the email gate on screen */
  var gateOpen = null;
  var advanceWhenClear = false;
  var GATE_KEY = 'reelbase-email:' + config.uuid;

  // ---- Reports to the organization's analytics webhooks (docs/webhooks.md) ----
  function newId() {
    if (window.crypto && window.crypto.randomUUID) return window.crypto.randomUUID();
    return Math.random().toString(36).slice(2) + Date.now().toString(36);
  }
  function visitorId() {
    try {
      var id = window.localStorage.getItem('reelbase-visitor');
      if (!id) window.localStorage.setItem('reelbase-visitor', (id = newId()));
      return id;
    } catch (e) {
      return newId();
    }
  }
  var loadId = newId();
  var visitor = visitorId();
  var pageUrl = config.kind === 'embed' && document.referrer ? document.referrer : window.location.href;
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

  /** @param {WatchedPercent} percent */
  function reportView(percent) {
    if (viewed[percent]) return;
    viewed[percent] = true;
    /** @type {AnalyticsReport} */
    var body = { type: 'view', percent_watched: percent };
    if (/^https?:\/\//i.test(pageUrl)) body.embed_url = pageUrl.slice(0, 2048);
    report(body);
  }

  // How often each twentieth of the chapter was watched in this load, sent when the chapter ends or is
  // left. Everything played since the last reading counts, so sparse timeupdates miss nothing; a jump
  // (a seek) starts a new stretch.
  var BUCKETS = 20;
  /** @type {number[] | null} */
  var buckets = null;
  var lastBucket = -1;
  /** @type {number | null} */
  var lastTime = null;
  /**
   * @param {number} t
   * @param {number} duration
   */
  function bucketOf(t, duration) {
    return Math.min(BUCKETS - 1, Math.floor((t / duration) * BUCKETS));
  }
  function trackAttention() {
    var duration = video.duration;
    if (!duration || !isFinite(duration)) return;
    var t = video.currentTime;
    var from = lastTime !== null && t >= lastTime && t - lastTime < 2 ? lastTime : t;
    var first = bucketOf(from, duration);
    var last = bucketOf(t, duration);
    if (!buckets) buckets = new Array(BUCKETS).fill(0);
    for (var i = first; i <= last; i++) {
      if (i !== lastBucket) buckets[i]++;
      lastBucket = i;
    }
    lastTime = t;
  }

  function flushAttention() {
    if (buckets) report({ type: 'attention_span', buckets: buckets });
    buckets = null;
    lastBucket = -1;
    lastTime = null;
  }
  window.addEventListener('pagehide', flushAttention);

  var MESSAGES = {
    processing: 'This video is being processed. Try again in a moment.',
    unavailable: 'This video is not available.',
    live: 'This live broadcast cannot be played in this browser.',
  };

  /** @param {string} text */
  function setState(text) {
    stateElement.textContent = text || '';
    stateElement.hidden = !text;
  }

  /** @param {string} key */
  function remembered(key) {
    try {
      return window.sessionStorage.getItem(key);
    } catch (e) {
      return null;
    }
  }

  /**
   * @param {string} key
   * @param {string} value
   */
  function remember(key, value) {
    try {
      window.sessionStorage.setItem(key, value);
    } catch (e) {
      /* storage refused (private mode, sandboxed embed): the gate shows again next time */
    }
  }

  function play() {
    var attempt = video.play();
    if (attempt && attempt.catch) {
      attempt.catch(function () {
        // Browsers refuse unmuted autoplay; muted playback is allowed.
        if (settings.autoplay && !video.muted) {
          video.muted = true;
          video.play().catch(function () {});
        }
      });
    }
  }

  // What runs inside an event's frame: the email gate's submit and the close buttons are reported to
  // the player; links open outside the frame.
  var FRAME_SCRIPT =
    "(function(){function post(m){parent.postMessage(m,'*');}" +
    "document.addEventListener('submit',function(e){var f=e.target;if(!f||f.getAttribute('data-reelbase-event')!=='email_gate')return;e.preventDefault();" +
    "var i=f.querySelector('input[type=email],input[name=email]');var v=i?i.value.trim():'';" +
    "if(!/^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$/.test(v)){if(i){i.setCustomValidity('Enter a valid email address');i.reportValidity();i.setCustomValidity('');}return;}" +
    "post({type:'email',email:v});},true);" +
    "document.addEventListener('click',function(e){var t=e.target&&e.target.closest&&e.target.closest('[data-reelbase-close]');if(t){e.preventDefault();post({type:'close'});}});" +
    "function size(){post({type:'size',height:document.documentElement.scrollHeight});}" +
    "window.addEventListener('load',size);size();})();";

  /** @param {PlayerEvent} event */
  function frameDocument(event) {
    var background = /^#?[0-9a-f]{3,8}$/i.test(event.background_color || '') ? /** @type {string} */ (event.background_color).replace(/^#?/, '#') : '#fff';
    return (
      '<!doctype html><html><head><meta charset="utf-8"><base target="_blank">' +
      '<style>html,body{margin:0}body{padding:12px;font:14px/1.4 system-ui,sans-serif;background:' +
      background +
      '}</style>' +
      '</head><body>' +
      (event.html || '') +
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

  /** @param {PlayerEvent} event */
  function show(event) {
    if (shown[event.id]) return;
    if (event.event_type === 'simple_email' && remembered(GATE_KEY)) {
      dismissed[event.id] = true;
      return;
    }
    var box = document.createElement('div');
    box.className = 'rb-overlay' + (covers(event) ? ' rb-fullscreen' : '');
    box.setAttribute('data-event-id', String(event.id));
    if (!covers(event)) {
      box.style.width = (event.width || 300) + 'px';
      box.style.height = '120px';
    }
    var frame = document.createElement('iframe');
    frame.setAttribute('sandbox', 'allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox');
    frame.setAttribute('title', event.event_type === 'simple_email' ? 'Email gate' : 'Call to action');
    frame.srcdoc = frameDocument(event);
    box.appendChild(frame);
    var closeable = event.event_type === 'simple_email' ? event.closeable : true;
    if (closeable) {
      var close = document.createElement('button');
      close.type = 'button';
      close.className = 'rb-close';
      close.setAttribute('aria-label', 'Close');
      close.textContent = '\u00d7';
      close.addEventListener('click', function () {
        dismiss(event.id);
      });
      box.appendChild(close);
    }
    overlays.appendChild(box);
    shown[event.id] = { event: event, box: box, frame: frame };
    if (event.event_type === 'simple_email') {
      gateOpen = event.id;
      video.pause();
    }
  }

  /** @param {number} id */
  function hide(id) {
    var entry = shown[id];
    if (!entry) return;
    // Boxes stay in .rb-overlays for as long as they are in `shown`.
    /** @type {ParentNode} */ (entry.box.parentNode).removeChild(entry.box);
    delete shown[id];
    if (gateOpen === id) gateOpen = null;
    if (advanceWhenClear && Object.keys(shown).length === 0) {
      advanceWhenClear = false;
      next();
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
  }

  window.addEventListener('message', function (e) {
    var message = e.data;
    if (!message || typeof message !== 'object') return;
    Object.keys(shown).forEach(function (id) {
      var entry = shown[id];
      if (entry.frame.contentWindow !== e.source) return;
      if (message.type === 'size' && !covers(entry.event)) {
        entry.box.style.height = Math.min(Math.max(Number(message.height) || 0, 40), 600) + 'px';
      } else if (message.type === 'close') {
        dismiss(entry.event.id);
      } else if (message.type === 'email' && entry.event.event_type === 'simple_email' && typeof message.email === 'string') {
        remember(GATE_KEY, message.email);
        report({ type: 'identified_view', email: message.email.slice(0, 254) });
        /** @type {Element} */ (root).dispatchEvent(new CustomEvent('reelbase:email', { detail: { email: message.email }, bubbles: true }));
        dismiss(entry.event.id);
      }
    });
  });

  /**
   * @param {number} index
   * @param {boolean} autoplay
   */
  function load(index, autoplay) {
    flushAttention();
    viewed = {};
    clearOverlays();
    dismissed = {};
    current = index;
    var chapter = config.chapters[index];
    chapterButtons.forEach(function (button) {
      button.setAttribute('aria-current', String(Number(button.getAttribute('data-chapter')) === index));
    });
    if (hls) {
      hls.destroy();
      hls = null;
    }
    while (video.firstChild) video.removeChild(video.firstChild);
    video.removeAttribute('src');
    if (!chapter || (chapter.state !== 'ready' && chapter.state !== 'live')) {
      setState(chapter ? MESSAGES[/** @type {'processing' | 'unavailable'} */ (chapter.state)] : 'This player has no videos yet.');
      video.load();
      return;
    }
    if (chapter.state === 'live') {
      if (!video.canPlayType('application/vnd.apple.mpegurl')) return playWithHlsJs(chapter.sources[0].src, autoplay);
      video.src = chapter.sources[0].src;
    } else {
      chapter.sources.forEach(function (source) {
        var element = document.createElement('source');
        element.src = source.src;
        element.type = source.type;
        video.appendChild(element);
      });
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
    setState('');
    video.load();
    if (autoplay) play();
  }

  // Browsers without HLS of their own (Firefox) play a broadcast through hls.js, loaded only then.
  /** @type {import('hls.js').default | null} */
  var hls = null;
  /**
   * @param {string} src
   * @param {boolean} autoplay
   */
  function playWithHlsJs(src, autoplay) {
    function start() {
      if (!window.Hls || !window.Hls.isSupported()) return setState(MESSAGES.live);
      if (hls) hls.destroy();
      // No worker: the page's CSP allows scripts from this origin only, not from blob: URLs.
      hls = new window.Hls({ enableWorker: false, lowLatencyMode: false });
      hls.loadSource(src);
      hls.attachMedia(video);
      hls.on(window.Hls.Events.ERROR, function (_event, data) {
        if (data && data.fatal) setState(MESSAGES.live);
      });
      setState('');
      if (autoplay) play();
    }
    if (window.Hls) return start();
    var script = document.createElement('script');
    script.src = '/web/hls.js';
    script.nonce = config.nonce;
    script.onload = start;
    script.onerror = function () {
      setState(MESSAGES.live);
    };
    document.head.appendChild(script);
  }

  function finish() {
    var target = settings.redirect_url;
    if (!target || !/^https?:\/\//i.test(target)) return;
    try {
      // window.top is null only in a detached frame: then this throws, as the catch expects.
      /** @type {Window} */ (settings.redirect_whole_page ? window.top : window).location.href = target;
    } catch (e) {
      window.location.href = target;
    }
  }

  function next() {
    if (current + 1 < config.chapters.length) load(current + 1, true);
    else finish();
  }

  video.addEventListener('timeupdate', function () {
    var chapter = config.chapters[current];
    if (!chapter) return;
    var t = video.currentTime;
    if (!video.paused) {
      trackAttention();
      var percent = video.duration ? (t / video.duration) * 100 : 0;
      /** @type {WatchedPercent[]} */ ([25, 50, 75]).forEach(function (p) {
        if (percent >= p) reportView(p);
      });
    }
    chapter.events.forEach(function (event) {
      if (event.second < 0) return;
      var end = event.auto_close && event.duration !== null ? event.second + event.duration : Infinity;
      var active = t >= event.second && t < end;
      if (active && !dismissed[event.id]) show(event);
      else if (!active && shown[event.id] && gateOpen !== event.id) hide(event.id);
    });
  });

  video.addEventListener('play', function () {
    // The email gate holds playback until it is answered (or skipped, where it may be).
    if (gateOpen !== null) return video.pause();
    lastTime = video.currentTime;
    reportView(0);
  });

  video.addEventListener('ended', function () {
    reportView(100);
    trackAttention();
    flushAttention();
    var chapter = config.chapters[current];
    var postrolls = (chapter ? chapter.events : []).filter(function (event) {
      return event.second < 0 && !dismissed[event.id];
    });
    if (postrolls.length === 0) return next();
    advanceWhenClear = true;
    postrolls.forEach(show);
    if (Object.keys(shown).length === 0) {
      advanceWhenClear = false;
      next();
    }
  });

  chapterButtons.forEach(function (button) {
    button.addEventListener('click', function () {
      load(Number(button.getAttribute('data-chapter')), true);
    });
  });

  if (settings.splash_screen_fade) root.classList.add('rb-splash-fade');
  if (settings.mute_onload) video.muted = true;
  var first = config.chapters[0];
  if (first && first.state === 'live') load(0, settings.autoplay);
  if (settings.play_button && !settings.autoplay && first && first.state === 'ready') {
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'rb-play';
    button.setAttribute('aria-label', 'Play');
    button.textContent = '\u25b6';
    button.addEventListener('click', play);
    video.addEventListener('play', function () {
      if (button.parentNode) button.parentNode.removeChild(button);
    });
    root.appendChild(button);
  }
  if (settings.autoplay && first && first.state === 'ready') play();
})();
