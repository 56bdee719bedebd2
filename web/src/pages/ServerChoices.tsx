// Servers as checkboxes, each with what it answers: a key's servers, a connection's on consent.
import type { DashboardConfig } from '../api.ts';

export function ServerChoices({
  servers,
  idPrefix,
  value,
  onChange,
}: {
  servers: DashboardConfig['servers'];
  idPrefix: string;
  value: string[];
  onChange: (next: string[]) => void;
}) {
  return (
    <ul className="server-choices">
      {servers.map((s) => (
        <li key={s.name}>
          <label className="check">
            <input
              type="checkbox"
              checked={value.includes(s.name)}
              aria-describedby={`${idPrefix}-desc-${s.name}`}
              onChange={(e) => onChange(e.target.checked ? [...value, s.name] : value.filter((x) => x !== s.name))}
            />
            <span className="server-name">{s.name}</span>
          </label>
          <span id={`${idPrefix}-desc-${s.name}`} className="hint server-desc">{s.description}</span>
        </li>
      ))}
    </ul>
  );
}
