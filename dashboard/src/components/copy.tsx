import { useState } from 'preact/hooks';

/** A read-only value with a Copy button (share links, embed codes). */
export function CopyField({ label, value, multiline = false }: { label: string; value: string; multiline?: boolean }) {
  const [copied, setCopied] = useState(false);
  const id = `copy-${label.toLowerCase().replace(/\W+/g, '-')}`;
  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // Without clipboard access (an http page that is not localhost): select it for Ctrl+C.
      (document.getElementById(id) as HTMLInputElement | HTMLTextAreaElement | null)?.select();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  }
  return (
    <div class="copy">
      <label for={id}>{label}</label>
      <div class="copy__row">
        {multiline ? <textarea id={id} readOnly rows={3} value={value} /> : <input id={id} readOnly value={value} />}
        <button class="button" type="button" onClick={() => void copy()} aria-label={`Copy ${label.toLowerCase()}`}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
    </div>
  );
}
