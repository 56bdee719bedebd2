// The warning a paid plan gets from 7 days before it ends: it lapses to Free, it does not renew.
// Shown on Usage and on Plans (where the extension is bought, so no link there).
import { When } from './When.tsx';

/** Days before a paid plan's end from which the pages warn (the server's LAPSE_NOTICE_DAYS). */
export const LAPSE_NOTICE_DAYS = 7;

export function LapseWarning({ plan, lapsesAt, onPlansPage = false }: { plan: string; lapsesAt: string; onPlansPage?: boolean }) {
  return (
    <div className="card notice" role="status" data-testid="lapse-warning">
      <strong>
        {plan} ends on <When iso={lapsesAt} withTime={false} />.
      </strong>{' '}
      Paid plans do not renew by themselves: after that day the account returns to Free with no new free credits (top-up credits are kept).{' '}
      {onPlansPage ? `Extend ${plan} by a month below to keep it.` : <a href="/app/plans">Extend it on the Plans page</a>}
    </div>
  );
}
