// An authorization error the person's browser shows (no redirect back to the app is safe: an
// unknown client, a redirect URI the client never registered): a page in words, in light and
// dark, at any width, with the RFC 6749 error code kept visible for whoever debugs the app. A
// client that asks for JSON gets the RFC's JSON error object instead.
import { escapeHtml as esc } from '../lib/text.ts';

export interface OAuthErrorOut {
  error: string;
  error_description?: string;
}

/** What the person reads first, by error code; the provider's own description follows it. */
const HEADLINES: Record<string, string> = {
  invalid_redirect_uri: 'The app asked to return you to an address it never registered',
  invalid_client: 'The app that sent you here is not known to cryptomcp',
  invalid_request: 'The app sent an authorization request cryptomcp cannot accept',
};

export function oauthErrorPage(out: OAuthErrorOut): string {
  const headline = HEADLINES[out.error] ?? 'This authorization request cannot continue';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Authorization stopped · cryptomcp</title>
<style>
:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; background: #f6f8fa; color: #1b1f24; }
@media (prefers-color-scheme: dark) { :root { background: #0d1117; color: #e6edf3; } .card { background: #161b22 !important; border-color: #30363d !important; } a { color: #58a6ff !important; } }
body { margin: 0; overflow-wrap: anywhere; }
main { max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
.card { background: #fff; border: 1px solid #d0d7de; border-radius: 10px; padding: 1rem 1.25rem; }
h1 { font-size: 1.4rem; margin-top: 0; }
a { color: #0b5cad; }
</style>
</head>
<body>
<main>
<div class="card">
<h1>${esc(headline)}</h1>
<p>Nothing was authorized and no account was touched. For your safety you were not sent back to the app.</p>
<p>Go back to the app and start connecting again. If this keeps happening, the app's developer needs to fix its sign-in settings: tell them the details below.</p>
<p>Details: <code>${esc(out.error)}</code>${out.error_description ? ` — ${esc(out.error_description)}` : ''}</p>
<p><a href="/">What is cryptomcp?</a></p>
</div>
</main>
</body>
</html>
`;
}
