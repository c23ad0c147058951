import Bowser from 'bowser';
import { isbot } from 'isbot';

/** What is kept of the client that sent a report (docs/analytics.md): coarse facts, nothing that identifies it. */
export interface ClientFacts {
  /** A crawler, link previewer or headless renderer: its reports are not kept. */
  bot: boolean;
  /** Do-Not-Track or Global Privacy Control: counted, without a visitor id. */
  optedOut: boolean;
  device: 'desktop' | 'mobile' | 'tablet' | 'tv' | 'other';
  browser: string;
}

const DEVICES = new Set(['desktop', 'mobile', 'tablet', 'tv']);

/**
 * The browser families Bowser knows. Its catch-all parser names any other agent after its first word
 * (or '' for none): those are 'Other', so that a breakdown's values stay a known, short list.
 */
const BROWSERS = new Set<string>(Object.values(Bowser.BROWSER_MAP));

/** What a user agent says, kept per distinct string: viewers of a page send a handful of them, many times. */
const known = new Map<string, Omit<ClientFacts, 'optedOut'>>();
const KNOWN_MAX = 2000;

function classify(ua: string): Omit<ClientFacts, 'optedOut'> {
  if (!ua || isbot(ua)) return { bot: Boolean(ua), device: 'other', browser: 'Other' };
  const parsed = Bowser.parse(ua);
  const type = parsed.platform.type ?? '';
  return {
    bot: false,
    device: DEVICES.has(type) ? (type as ClientFacts['device']) : 'other',
    browser: BROWSERS.has(parsed.browser.name ?? '') ? parsed.browser.name! : 'Other',
  };
}

export function clientFacts(headers: Record<string, string | string[] | undefined>): ClientFacts {
  const ua = typeof headers['user-agent'] === 'string' ? headers['user-agent'].slice(0, 512) : '';
  const optedOut = headers.dnt === '1' || headers['sec-gpc'] === '1';
  let facts = known.get(ua);
  if (!facts) {
    facts = classify(ua);
    if (known.size >= KNOWN_MAX) known.clear();
    known.set(ua, facts);
  }
  return { ...facts, optedOut };
}
