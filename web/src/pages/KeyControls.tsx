// A key's controls: pause and resume, a credit cap per UTC day or month, its own rate limit and
// read-only. The service enforces them when a call is metered (pause, cap, limit) or authorised
// (read-only); this page only sets them and shows where the key stands.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, describeError, type KeyInfo } from '../api.ts';

const credits = (n: number) => n.toLocaleString('en-US');

/** What the key's controls are, in a line for its row of the list. */
export function KeyControlSummary({ k }: { k: KeyInfo }) {
  const parts: string[] = [];
  if (k.credit_cap !== null) parts.push(`${credits(k.cap_spent)} of ${credits(k.credit_cap)} credits this ${k.cap_period === 'day' ? 'UTC day' : 'month'}`);
  if (k.rate_limit_per_minute !== null) parts.push(`${k.rate_limit_per_minute}/min`);
  if (k.read_only) parts.push('read-only');
  if (parts.length === 0) return null;
  return <div className="muted small" data-testid="key-controls-summary">{parts.join(' · ')}</div>;
}

/** Pause or resume a key: one button whose name says what it does. */
export function PauseButton({ k, disabled, onDone, onError }: { k: KeyInfo; disabled: boolean; onDone: () => void; onError: (message: string) => void }) {
  const [busy, setBusy] = useState(false);
  const toggle = async () => {
    if (busy) return;
    setBusy(true);
    try {
      await api('POST', `/keys/${k.id}/${k.paused ? 'resume' : 'pause'}`);
      onDone();
    } catch (err) {
      onError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <button type="button" disabled={disabled || busy} onClick={() => void toggle()} aria-label={`${k.paused ? 'Resume' : 'Pause'} ${k.name}`}>
      {k.paused ? 'Resume' : 'Pause'}
    </button>
  );
}

/** Sets a key's credit cap, rate limit and read-only scope. Empty fields mean no cap, no own limit. */
export function KeyLimits({ keyInfo, onSaved, onCancel }: { keyInfo: KeyInfo; onSaved: () => void; onCancel: () => void }) {
  const [cap, setCap] = useState(keyInfo.credit_cap?.toString() ?? '');
  const [period, setPeriod] = useState<'day' | 'month'>(keyInfo.cap_period);
  const [rate, setRate] = useState(keyInfo.rate_limit_per_minute?.toString() ?? '');
  const [readOnly, setReadOnly] = useState(keyInfo.read_only);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string>();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (saving) return;
    setSaving(true);
    setError(undefined);
    try {
      await api('PATCH', `/keys/${keyInfo.id}`, {
        credit_cap: cap.trim() === '' ? null : Number(cap),
        cap_period: period,
        rate_limit_per_minute: rate.trim() === '' ? null : Number(rate),
        read_only: readOnly,
      });
      onSaved();
    } catch (err) {
      setError(describeError(err));
      setSaving(false);
    }
  };

  return (
    <section className="card" aria-labelledby="limits-title" data-testid="key-limits">
      <h2 id="limits-title" ref={heading} tabIndex={-1}>Limits of “{keyInfo.name}”</h2>
      <form onSubmit={(e) => void save(e)}>
        <div className="grid2">
          <label>
            Credit cap
            <input type="number" inputMode="numeric" min={1} step={1} value={cap} onChange={(e) => setCap(e.target.value)} aria-describedby="cap-hint" />
            <span id="cap-hint" className="hint">
              Most credits this key may spend per period; calls past it are refused and cost nothing. Empty: no cap.
              {keyInfo.credit_cap !== null ? ` Spent so far: ${credits(keyInfo.cap_spent)}.` : ''}
            </span>
          </label>
          <label>
            Cap period
            <select value={period} onChange={(e) => setPeriod(e.target.value as 'day' | 'month')}>
              <option value="day">Per day (UTC)</option>
              <option value="month">Per calendar month (UTC)</option>
            </select>
          </label>
          <label>
            Rate limit (calls per minute)
            <input type="number" inputMode="numeric" min={1} max={100000} step={1} value={rate} onChange={(e) => setRate(e.target.value)} aria-describedby="rate-hint" />
            <span id="rate-hint" className="hint">This key's own limit on tool calls, within your plan's. Empty: only the plan's.</span>
          </label>
        </div>
        <label className="check">
          <input type="checkbox" checked={readOnly} onChange={(e) => setReadOnly(e.target.checked)} aria-describedby="ro-hint" />
          Read-only
        </label>
        <span id="ro-hint" className="hint">A read-only key cannot create, pause or delete alert rules or change watchlists.</span>
        <div className="create-row">
          <button type="submit" className="primary" disabled={saving}>{saving ? 'Saving…' : 'Save limits'}</button>
          <button type="button" onClick={onCancel}>Cancel</button>
        </div>
      </form>
      <p role="alert" className="error">{error}</p>
    </section>
  );
}
