/**
 * The admin plugin: an HTTP API for operators under `/admin/v1`, behind a bearer token of its own: keys
 * (create, list, rotate, revoke, assign plans; secrets stored hashed), usage per key, day and method, x402 payments by key and wallet,
 * plans (managed ones too), a usage export of every key for billing, and upstream status.
 * {@link KeyManager} and {@link PlanManager}, which it is built on, also serve the example gateway's CLI.
 *
 * @packageDocumentation
 */
export { admin, type AdminPlugin } from './plugin.js';
export { AdminTransport } from './admin-transport.js';
export { DashboardTransport } from './dashboard-transport.js';
export { type DashboardAsset } from './dashboard-assets.js';
export { TrafficRecorder, type KeyTraffic } from './traffic-recorder.js';
export { DashboardSessions, SESSION_COOKIE, DASHBOARD_HEADER, SESSION_MS } from './dashboard-sessions.js';
export { KeyManager, KeyManagerError, KEY_ID_PATTERN, MAX_USAGE_DAYS, type KeyManagerDeps, type KeyView, type IssuedKey, type DayUsage, type KeyBalance, type KeyTopUp, type KeyStorage } from './key-manager.js';
export { PlanManager, PLAN_NAME_PATTERN, type PlanManagerDeps, type PlanView, type PlanInput } from './plan-manager.js';
export { usageExport, MAX_EXPORT_DAYS, USAGE_EXPORT_COLUMNS, type UsageExport, type UsageExportDeps, type UsageExportRequest, type UsageExportFormat } from './usage-export.js';
export { paymentView, listPayments, describePayment, PaymentJournalKey, WALLET_PATTERN, type PaymentView, type PaymentLister, type ListedPayment, type PaymentState } from './payment-list.js';
export { ADMIN_PLUGIN, ADMIN_TOKEN_ENV, type AdminSettings, type ResolvedAdminSettings } from './settings.js';
