// A five-page router over the History API: /app/keys, /app/start, /app/connect, /app/usage, /app/plans.
import { useEffect, useState } from 'react';

export const PAGES = ['keys', 'start', 'connect', 'usage', 'plans'] as const;
export type Page = (typeof PAGES)[number];

function current(): Page {
  const name = window.location.pathname.replace(/^\/app\/?/, '').split('/')[0] ?? '';
  return (PAGES as readonly string[]).includes(name) ? (name as Page) : 'keys';
}

export function useRoute(): [Page, (page: Page) => void] {
  const [page, setPage] = useState<Page>(current);
  useEffect(() => {
    const onPop = () => setPage(current());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const navigate = (next: Page) => {
    window.history.pushState(null, '', `/app/${next}`);
    setPage(next);
  };
  return [page, navigate];
}
