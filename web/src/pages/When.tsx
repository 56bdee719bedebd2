// A date as people read it: the browser's locale and time zone, with the UTC time on hover.
import { formatDate } from '../api.ts';

export function When({ iso, withTime = true }: { iso: string | null; withTime?: boolean }) {
  if (!iso) return <>—</>;
  const { text, utc } = formatDate(iso, withTime);
  return (
    <time dateTime={iso} title={utc}>
      {text}
    </time>
  );
}
