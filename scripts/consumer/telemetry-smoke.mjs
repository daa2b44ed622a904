// ESM twin of telemetry-smoke.cjs: the same steps, every package loaded with import.
import * as core from '@lockkit/core';
import * as telemetry from '@lockkit/opentelemetry';
import * as redis from '@lockkit/redis';
import * as sdkMetrics from '@opentelemetry/sdk-metrics';
import * as sdkTrace from '@opentelemetry/sdk-trace-base';
import steps from './telemetry-smoke.cjs';

await steps.runTelemetrySmoke({ core, redis, telemetry, sdkTrace, sdkMetrics });
