/** 1:02:03, or 2:03 under an hour. */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '–';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export function date(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}

/** What a video's status means to a person. */
export function statusLabel(status: string | null): { text: string; tone: 'ok' | 'busy' | 'bad' | 'idle' } {
  switch (status) {
    case 'ready':
      return { text: 'Ready', tone: 'ok' };
    case 'error':
      return { text: 'Failed', tone: 'bad' };
    case 'waiting_for_upload':
      return { text: 'Waiting for upload', tone: 'idle' };
    default:
      return { text: 'Processing', tone: 'busy' };
  }
}
