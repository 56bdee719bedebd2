// A small router over the History API: /app/keys, /app/start, /app/connect, /app/apps, /app/usage,
// /app/plans, /app/webhooks; and /app/consent/{uid}, where an app's OAuth authorization asks for consent.
import { useEffect, useState } from 'react';

export const PAGES = ['keys', 'start', 'connect', 'apps', 'usage', 'plans', 'webhooks'] as const;
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

/** The authorization request the consent page answers, when the address is /app/consent/{uid}. */
export function consentUid(): string | undefined {
  const match = /^\/app\/consent\/([^/]+)\/?$/.exec(window.location.pathname);
  return match?.[1] ? decodeURIComponent(match[1]) : undefined;
}
