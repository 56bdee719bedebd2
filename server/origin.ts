// The service's public origins, from configuration only. A request's Host or X-Forwarded-Host is
// chosen by whoever sends it: a sign-in domain, an OAuth issuer or a metadata URL taken from it
// lets a phishing page have a victim sign a message for its own host and replay it here.
//
// PUBLIC_BASE_URL names where clients reach the service; DASHBOARD_ORIGIN, where the dashboard is
// (default: the origin of PUBLIC_BASE_URL). Without PUBLIC_BASE_URL (`npm start`, a local
// `serve`), the origin is the URL the server actually listens on, known once it listens (PORT=0
// picks the port then): routes read these values per request, never while they are built.

export class PublicOrigins {
  #base: string | undefined;
  readonly #dashboard: string | undefined;

  constructor(configured: { publicBaseUrl: string | undefined; dashboardOrigin: string | undefined }) {
    this.#base = configured.publicBaseUrl;
    this.#dashboard = configured.dashboardOrigin;
  }

  /** Called once the server listens, with the URL it listens on; a configured base URL stays. */
  listening(url: string): void {
    this.#base ??= url.replace(/\/+$/, '');
  }

  /** Where MCP clients reach the service (no trailing slash): the OAuth issuer and resource root. */
  get base(): string {
    // Only reachable before listen() resolves, when no request can be served yet.
    if (this.#base === undefined) throw new Error('the public base URL is not known before the server listens');
    return this.#base;
  }

  /** The dashboard's origin (scheme, host, port): what sign-in messages must name. */
  get dashboard(): string {
    return this.#dashboard ?? new URL(this.base).origin;
  }
}

/** The URL a server listening on host:port is reached at from this machine. */
export function listenUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The service's public origins (server/origin.ts), for routes whose dependencies do not carry them. */
    origins: PublicOrigins;
  }
}
