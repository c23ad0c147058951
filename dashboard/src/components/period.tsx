import { useState } from 'preact/hooks';

export interface Period {
  from: string;
  to: string;
}

const iso = (d: Date) => d.toISOString().slice(0, 10);

/** The last `days` days up to today (UTC), as the API counts them. */
export function lastDays(days: number): Period {
  const to = new Date();
  const from = new Date(to.getTime() - (days - 1) * 86_400_000);
  return { from: iso(from), to: iso(to) };
}

/** The period of a report: the last 7, 30 or 90 days, or two dates. */
export function PeriodPicker({ value, onChange }: { value: Period; onChange: (p: Period) => void }) {
  const [custom, setCustom] = useState(false);
  const presets = [7, 30, 90];
  const preset = presets.find((d) => lastDays(d).from === value.from && lastDays(d).to === value.to);
  return (
    <div class="period" role="group" aria-label="Period">
      {presets.map((d) => (
        <button
          key={d}
          type="button"
          class={`button button--small${preset === d && !custom ? ' button--on' : ''}`}
          aria-pressed={preset === d && !custom}
          onClick={() => {
            setCustom(false);
            onChange(lastDays(d));
          }}
        >
          {d} days
        </button>
      ))}
      <button type="button" class={`button button--small${custom ? ' button--on' : ''}`} aria-pressed={custom} onClick={() => setCustom(true)}>
        Dates
      </button>
      {custom ? (
        <>
          <label>
            From <input type="date" value={value.from} max={value.to} onChange={(e) => onChange({ ...value, from: e.currentTarget.value })} />
          </label>
          <label>
            To <input type="date" value={value.to} min={value.from} onChange={(e) => onChange({ ...value, to: e.currentTarget.value })} />
          </label>
        </>
      ) : null}
    </div>
  );
}
