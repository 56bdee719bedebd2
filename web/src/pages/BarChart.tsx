// A stacked bar chart (Chart.js) drawn in the page's colours, light or dark. The numbers it shows
// are also in a table beside it, for screen readers and for copying.
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { useEffect, useRef } from 'react';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

// A colour-blind-safe palette (Okabe–Ito), dark enough against white.
export const COLORS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#7a6f00', '#000000', '#999999'];

export interface BarData {
  /** YYYY-MM-DD days; the axis shows MM-DD. */
  labels: string[];
  datasets: { label: string; data: number[]; backgroundColor: string; stack: string }[];
}

/** Every UTC day from `from` to `to`, both included. */
export function daysFrom(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`), end = Date.parse(`${to}T00:00:00Z`); t <= end; t += 86_400_000) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

export function BarChart({ data, label, testId }: { data: BarData; label: string; testId?: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const style = getComputedStyle(document.documentElement);
    Chart.defaults.color = style.getPropertyValue('--muted').trim() || '#57606a';
    Chart.defaults.borderColor = style.getPropertyValue('--line').trim() || '#d0d7de';
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data,
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: { x: { stacked: true, ticks: { autoSkip: true, maxRotation: 0, callback: (_v, i) => data.labels[i]?.slice(5) } }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
        plugins: { legend: { position: 'bottom' } },
      },
    });
    return () => chart.destroy();
  }, [data]);
  return (
    <div className="chart">
      <canvas ref={canvas} role="img" aria-label={label} data-testid={testId} />
    </div>
  );
}
