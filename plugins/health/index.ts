/**
 * Liveness (`GET /healthz`) and readiness (`GET /readyz`) probes on the gateway's port, for load
 * balancers and Kubernetes.
 *
 * @packageDocumentation
 */
export { health, HEALTH_PLUGIN } from './plugin.js';
export { HealthTransport, type HealthSettings } from './health-transport.js';
export { type Readiness } from './readiness.js';
