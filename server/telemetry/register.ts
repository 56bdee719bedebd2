// Imported first by server/cli.ts (or loaded with `node --import ./server/telemetry/register.ts`):
// starts tracing before any module it instruments is loaded, when OTEL_* asks for it.
import { otelEnv } from './config.ts';
import { startTelemetry, tracingRequested } from './start.ts';

if (tracingRequested(otelEnv())) startTelemetry();
