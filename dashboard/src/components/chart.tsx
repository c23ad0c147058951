import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';

export interface Series {
  label: string;
  values: number[];
  color: string;
  /** How a value is shown in the legend and the axis. */
  format?: (v: number) => string;
}

/**
 * A line chart (uPlot, loaded when a chart is first shown: it is not in the initial JavaScript). `x`
 * are Unix seconds for time, or plain numbers (seconds into a video) with `xTime` false. The data are
 * also in a table for screen readers and as text.
 */
/** Whole-number steps for counts: a count axis never shows 0.5. */
const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000];

export function Chart({
  title,
  x,
  series,
  xTime = true,
  height = 220,
  counts = false,
}: {
  title: string;
  x: number[];
  series: Series[];
  xTime?: boolean;
  height?: number;
  /** The values are counts: whole-number ticks. */
  counts?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let plot: uPlot | undefined;
    let cancelled = false;
    let observer: ResizeObserver | undefined;
    void import('uplot').then(({ default: UPlot }) => {
      if (cancelled || !box.current) return;
      const el = box.current;
      plot = new UPlot(
        {
          width: el.clientWidth,
          height,
          scales: { x: { time: xTime } },
          axes: [
            { stroke: '#5b6272', grid: { stroke: '#eef0f4' } },
            {
              stroke: '#5b6272',
              grid: { stroke: '#eef0f4' },
              ...(counts ? { incrs: WHOLE_STEPS } : {}),
              values: (_u, vs) => vs.map((v) => (series[0]?.format ?? String)(v)),
            },
          ],
          series: [
            { label: xTime ? 'Time' : 'Second' },
            ...series.map((s) => ({
              label: s.label,
              stroke: s.color,
              width: 2,
              value: (_u: uPlot, v: number | null) => (v === null ? '–' : (s.format ?? String)(v)),
            })),
          ],
          legend: { show: true },
        },
        [x, ...series.map((s) => s.values)],
        el,
      );
      observer = new ResizeObserver(() => plot?.setSize({ width: el.clientWidth, height }));
      observer.observe(el);
    });
    return () => {
      cancelled = true;
      observer?.disconnect();
      plot?.destroy();
    };
  }, [x, series, xTime, height, counts]);

  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} class="chart__plot" aria-hidden="true" />
      <table class="visually-hidden">
        <caption>{title}</caption>
        <thead>
          <tr>
            <th scope="col">{xTime ? 'Time' : 'Second'}</th>
            {series.map((s) => (
              <th scope="col" key={s.label}>
                {s.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {x.map((v, i) => (
            <tr key={v}>
              <td>{xTime ? new Date(v * 1000).toISOString() : v}</td>
              {series.map((s) => (
                <td key={s.label}>{(s.format ?? String)(s.values[i])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
