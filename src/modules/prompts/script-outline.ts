/**
 * Deterministic script outlines: a prompt template is filled with the request's values and turned into
 * sections. No model and no randomness: the same template and input always give the same outline.
 *
 * - Placeholders `{{topic}}`, `{{video_type}}`, `{{length}}`, `{{duration}}`, `{{type}}` (spaces inside
 *   the braces allowed) are replaced; unknown ones are left as they are.
 * - Lines of the filled prompt that are list items (`- x`, `* x`, `• x`, `1. x`, `1) x`) become the
 *   section titles, in order (at most MAX_SECTIONS); without any, a default structure by length is used.
 * - The other lines form the `direction` printed at the top of the script.
 */
import type { ScriptLength } from './prompts.schemas.ts';

export interface OutlineInput {
  template: string;
  type: string;
  topic: string;
  videoType: string;
  length: ScriptLength;
}

export interface OutlineSection {
  title: string;
  content: string;
  seconds: number;
}

export interface Outline {
  title: string;
  prompt: string;
  seconds: number;
  sections: OutlineSection[];
  script: string;
}

export const MAX_SECTIONS = 12;
const TITLE_MAX = 120;

const PROFILES: Record<ScriptLength, { seconds: number; duration: string; points: number }> = {
  short: { seconds: 60, duration: '1 minute', points: 2 },
  medium: { seconds: 180, duration: '3 minutes', points: 3 },
  long: { seconds: 420, duration: '7 minutes', points: 5 },
};

const DEFAULT_SECTIONS: Record<ScriptLength, string[]> = {
  short: ['Hook', 'Key points', 'Call to action'],
  medium: ['Hook', 'Introduction', 'Key points', 'Call to action'],
  long: ['Hook', 'Introduction', 'Key points', 'Example', 'Summary', 'Call to action'],
};

const POINTS = [
  (t: string) => `what ${t} is and why it matters`,
  (t: string) => `how ${t} works in practice`,
  (t: string) => `the most common mistakes with ${t}`,
  (t: string) => `a quick win the viewer can try with ${t} today`,
  (t: string) => `how to measure success with ${t}`,
];

type Kind = 'hook' | 'intro' | 'points' | 'example' | 'summary' | 'cta' | 'other';

function kindOf(title: string): Kind {
  const t = title.toLowerCase();
  if (/\b(hook|opening|opener|attention|teaser)\b/.test(t)) return 'hook';
  if (/\b(intro|introduction|context|background|problem)\b/.test(t)) return 'intro';
  if (/\b(cta|call to action|next steps?|outro|close|closing)\b/.test(t)) return 'cta';
  if (/\b(summary|recap|conclusion|wrap|takeaways?)\b/.test(t)) return 'summary';
  if (/\b(example|demo|demonstration|story|case|walkthrough)\b/.test(t)) return 'example';
  if (/\b(points?|body|main|talking|benefits?|features?|tips?|steps?)\b/.test(t)) return 'points';
  return 'other';
}

const WEIGHTS: Record<Kind, number> = { hook: 1, cta: 1, summary: 1, intro: 2, example: 2, other: 2, points: 3 };

function sectionContent(kind: Kind, title: string, topic: string, videoType: string, points: number): string {
  switch (kind) {
    case 'hook':
      return `Open with the question your viewer is already asking about ${topic}, and promise the answer in this ${videoType}.`;
    case 'intro':
      return `Say who you are and who this ${videoType} is for, then set up ${topic}: the problem it solves and what the viewer will take away.`;
    case 'points':
      return `Cover ${points} points: ${POINTS.slice(0, points)
        .map((p, i) => `${i + 1}) ${p(topic)}`)
        .join('; ')}.`;
    case 'example':
      return `Show one concrete example of ${topic} in action, step by step, with the result on screen.`;
    case 'summary':
      return `Recap the main takeaways about ${topic} in two sentences.`;
    case 'cta':
      return `Tell the viewer the one thing to do next about ${topic}, and where to do it.`;
    default:
      return `${title}: explain how this relates to ${topic}, in plain words and with one example.`;
  }
}

/** Integer split of `total` by weights; the remainder goes to the heaviest (first) section. */
function split(total: number, weights: number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const parts = weights.map((w) => Math.floor((total * w) / sum));
  const rest = total - parts.reduce((a, b) => a + b, 0);
  const heaviest = weights.indexOf(Math.max(...weights));
  parts[heaviest] += rest;
  return parts;
}

const clock = (s: number) => `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;

export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (whole, name: string) => (Object.prototype.hasOwnProperty.call(values, name) ? values[name] : whole));
}

const LIST_ITEM = /^\s*(?:[-*\u2022]|\d{1,3}[.)])\s+(.*\S)\s*$/;

export function buildOutline(input: OutlineInput): Outline {
  const profile = PROFILES[input.length];
  const prompt = fillTemplate(input.template.replace(/\r\n?/g, '\n'), {
    topic: input.topic,
    video_type: input.videoType,
    length: input.length,
    duration: profile.duration,
    type: input.type,
  });

  const titles: string[] = [];
  const direction: string[] = [];
  for (const line of prompt.split('\n')) {
    const item = LIST_ITEM.exec(line);
    if (item) {
      if (titles.length < MAX_SECTIONS) titles.push(item[1].slice(0, TITLE_MAX).trim());
    } else if (line.trim()) {
      direction.push(line.trim());
    }
  }
  const sectionTitles = titles.length > 0 ? titles : DEFAULT_SECTIONS[input.length];
  const kinds = sectionTitles.map(kindOf);
  const seconds = split(
    profile.seconds,
    kinds.map((k) => WEIGHTS[k]),
  );
  const sections = sectionTitles.map((title, i) => ({
    title,
    content: sectionContent(kinds[i], title, input.topic, input.videoType, profile.points),
    seconds: seconds[i],
  }));

  const title = input.topic.charAt(0).toUpperCase() + input.topic.slice(1);
  const lines = [title, `${input.videoType} · ${input.length} (about ${profile.duration})`];
  if (direction.length > 0) lines.push(`Direction: ${direction.join(' ')}`);
  let at = 0;
  sections.forEach((s, i) => {
    lines.push('', `${i + 1}. ${s.title} (${clock(at)}-${clock(at + s.seconds)})`, s.content);
    at += s.seconds;
  });

  return { title, prompt, seconds: profile.seconds, sections, script: lines.join('\n') };
}
