// A small router over the History API: /app/keys, /app/start, /app/connect, /app/apps, /app/usage,
// /app/plans; and /app/consent/{uid}, where an app's OAuth authorization asks for consent. /app/
// alone opens the keys page; any other address is a page that does not exist, said as such.
import { useEffect, useState } from 'react';

export const PAGES = ['keys', 'start', 'connect', 'apps', 'usage', 'plans'] as const;
export type Page = (typeof PAGES)[number];
/** Where the address names no page of the dashboard. */
export type Route = Page | 'not-found';

function current(): Route {
  const rest = window.location.pathname.replace(/^\/app\/?/, '').replace(/\/$/, '');
  if (rest === '') return 'keys';
  return (PAGES as readonly string[]).includes(rest) ? (rest as Page) : 'not-found';
}

/**
 * The current route, a navigate function, and a count of navigations made in the page (a link
 * followed, or back and forward): the app moves focus to the new page's heading on each.
 */
export function useRoute(): [Route, (page: Page) => void, number] {
  const [route, setRoute] = useState<Route>(current);
  const [moves, setMoves] = useState(0);
  useEffect(() => {
    const onPop = () => {
      setRoute(current());
      setMoves((n) => n + 1);
    };
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const navigate = (next: Page) => {
    window.history.pushState(null, '', `/app/${next}`);
    setRoute(next);
    setMoves((n) => n + 1);
  };
  return [route, navigate, moves];
}

/** The authorization request the consent page answers, when the address is /app/consent/{uid}. */
export function consentUid(): string | undefined {
  const match = /^\/app\/consent\/([^/]+)\/?$/.exec(window.location.pathname);
  return match?.[1] ? decodeURIComponent(match[1]) : undefined;
}
