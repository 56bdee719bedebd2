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
