// The OpenTelemetry settings: the standard OTEL_* variables, which the SDK's exporters also read.
// The one module of server/telemetry/ that reads the environment (a lint rule keeps it so).

/** The service name spans carry unless OTEL_SERVICE_NAME says otherwise. */
export const DEFAULT_SERVICE_NAME = 'cryptomcp';

/** This process's OTEL_* settings (the whole environment: the SDK reads its variables from it). */
export function otelEnv(): NodeJS.ProcessEnv {
  return process.env;
}

export function serviceName(env: NodeJS.ProcessEnv = otelEnv()): string {
  return env.OTEL_SERVICE_NAME ?? DEFAULT_SERVICE_NAME;
}

/**
 * A piece of the service's own telemetry code that a benchmark can swap for the library's own,
 * to measure what it buys (bench:observability, BENCH_ONLY=pieces; bench/NOTES.md, "Telemetry
 * pieces"):
 * - `export`: the SDK's BatchSpanProcessor and exporter on the main thread, instead of the span
 *   ring and the export thread (export-thread.ts);
 * - `tallies`: prom-client's inc() and observe() for the per-request metrics, instead of the
 *   tallies (tallies.ts).
 */
export type TelemetryPiece = 'export' | 'tallies';
const PIECES: readonly TelemetryPiece[] = ['export', 'tallies'];

/**
 * The pieces CRYPTOMCP_BENCH_PLAIN_TELEMETRY (a comma list) replaces with the library's own. A
 * benchmark setting, not an operator's: production runs with none replaced. An unknown name is
 * an error, so a typo in a benchmark cannot measure the wrong thing.
 */
export function plainTelemetry(env: NodeJS.ProcessEnv = otelEnv()): ReadonlySet<TelemetryPiece> {
  const names = (env.CRYPTOMCP_BENCH_PLAIN_TELEMETRY ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const name of names) {
    if (!PIECES.includes(name as TelemetryPiece)) throw new Error(`CRYPTOMCP_BENCH_PLAIN_TELEMETRY: unknown piece "${name}" (known: ${PIECES.join(', ')})`);
  }
  return new Set(names as TelemetryPiece[]);
}
