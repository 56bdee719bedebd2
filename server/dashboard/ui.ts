// Serves the dashboard's front end (web/, built by Vite into web/dist) under /app. Unknown paths
// under /app answer index.html so the single-page app's own routes (/app/keys, /app/usage) load.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

export const WEB_DIST = fileURLToPath(new URL('../../web/dist/', import.meta.url));

// The page talks only to its own origin (and WalletConnect's relay when configured); it may not
// be framed, so no other site can overlay it to trick a signature.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  // WalletConnect's relay, and its QR modal's wallet list, images and fonts (only used when configured).
  // Images from any https origin: WalletConnect's wallet list, and the logo an OAuth client names
  // in its metadata, which the consent page shows.
  "img-src 'self' data: blob: https:",
  "font-src 'self' https://fonts.reown.com",
  "connect-src 'self' https://*.walletconnect.com wss://*.walletconnect.com https://*.walletconnect.org wss://*.walletconnect.org https://*.web3modal.org https://*.reown.com wss://*.reown.com",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');

export async function dashboardUi(app: FastifyInstance, opts: { dist?: string } = {}): Promise<void> {
  const dist = opts.dist ?? WEB_DIST;
  app.addHook('onSend', async (_request, reply) => {
    reply.header('content-security-policy', CSP);
    reply.header('x-frame-options', 'DENY');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
  });
  if (!fs.existsSync(`${dist}index.html`)) {
    // A checkout whose front end was never built (npm install builds it): say how, instead of 404.
    app.get('/*', async (_request, reply) =>
      reply.code(503).type('text/plain; charset=utf-8').send('The dashboard is not built: run `npm run build:web` and restart.\n'),
    );
    return;
  }
  // preCompressed: the build writes .br and .gz beside each file (scripts/build-web.ts); a browser
  // that accepts one gets it (with Vary: Accept-Encoding), anything else the file as it is.
  await app.register(fastifyStatic, { root: dist, prefix: '/', wildcard: false, index: 'index.html', cacheControl: false, preCompressed: true });
  app.addHook('onSend', async (request, reply) => {
    // Hashed asset names can be cached forever; index.html must not be, or a deploy would not show.
    reply.header('cache-control', request.url.startsWith('/app/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
  });
  app.setNotFoundHandler(async (_request, reply) => reply.type('text/html; charset=utf-8').sendFile('index.html'));
}
