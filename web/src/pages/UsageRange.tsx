// The Usage page's range: a preset (the last 7, 30 or 90 days) or custom from/to days (UTC, both
// included). The chosen range is handed on as the query the usage endpoints take.
import { useState } from 'react';

export interface UsageRangeValue {
  /** `days=N` or `from=YYYY-MM-DD&to=YYYY-MM-DD`. */
  query: string;
  /** How the charts' labels describe it. */
  text: string;
}

export const DEFAULT_RANGE: UsageRangeValue = { query: 'days=30', text: 'the last 30 days' };
const PRESETS = [7, 30, 90];
const MAX_DAYS = 366;

const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

export function UsageRange({ value, onChange }: { value: UsageRangeValue; onChange: (v: UsageRangeValue) => void }) {
  const [mode, setMode] = useState(value.query.startsWith('days=') ? value.query.slice(5) : 'custom');
  const [from, setFrom] = useState(daysAgo(6));
  const [to, setTo] = useState(today());
  const [problem, setProblem] = useState<string>();

  const applyCustom = (f: string, t: string) => {
    if (!f || !t) return setProblem('Choose both a first and a last day.');
    if (t < f) return setProblem('The last day must not be before the first day.');
    const span = Math.round((Date.parse(t) - Date.parse(f)) / 86_400_000) + 1;
    if (span > MAX_DAYS) return setProblem(`Choose at most ${MAX_DAYS} days (this range has ${span}).`);
    setProblem(undefined);
    onChange({ query: `from=${f}&to=${t}`, text: `${f} to ${t} (UTC)` });
  };

  return (
    <div className="range" role="group" aria-label="Date range">
      <label className="inline">
        Show{' '}
        <select
          value={mode}
          data-testid="range-preset"
          onChange={(e) => {
            setMode(e.target.value);
            if (e.target.value === 'custom') applyCustom(from, to);
            else onChange({ query: `days=${e.target.value}`, text: `the last ${e.target.value} days` });
          }}
        >
          {PRESETS.map((d) => (
            <option key={d} value={String(d)}>{d} days</option>
          ))}
          <option value="custom">Custom range</option>
        </select>
      </label>
      {mode === 'custom' && (
        <form
          className="custom-range"
          onSubmit={(e) => {
            e.preventDefault();
            applyCustom(from, to);
          }}
        >
          <label className="inline">
            From <input type="date" value={from} max={today()} onChange={(e) => setFrom(e.target.value)} data-testid="range-from" />
          </label>
          <label className="inline">
            To <input type="date" value={to} max={today()} onChange={(e) => setTo(e.target.value)} data-testid="range-to" />
          </label>
          <button type="submit">Apply</button>
          <span className="hint">Days are UTC, both included.</span>
        </form>
      )}
      <p role="alert" className="error">{problem}</p>
    </div>
  );
}
