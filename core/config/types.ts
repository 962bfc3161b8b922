/** A plan as configured. */
export interface PlanConfig {
  /** Credits a key may spend per UTC day. */
  dailyCredits: number;
  /** Sustained throughput in credits per second. */
  creditsPerSecond: number;
  /** Whether calls may fail over to a partner provider. */
  failover: boolean;
}

/** An API key as configured. */
export interface KeyConfig {
  /** The API key clients put in the URL. */
  key: string;
  /** Loggable id of the key (default: `key-` and the first 8 hex digits of the key's SHA-256). */
  id?: string;
  /** Name of the key's plan. */
  plan: string;
  /** The key's secret, for APIs that take one (the file-storage API's HTTP basic password); only its scrypt hash is kept. */
  secret?: string;
  /** The secret already hashed (`scrypt$<salt>$<hash>`, see `hashSecret`); wins over {@link KeyConfig.secret}. */
  secretHash?: string;
  /** Free-form settings for plugins (allowlists, for example). */
  settings?: Record<string, unknown>;
}

/** Where a network is served: a path prefix, host names, or both. */
export interface NetworkBaseConfig {
  /** Path prefix, e.g. `/eth-mainnet` (default: `/` + the network name). Use `/` for none. */
  path?: string;
  /** Host names (without port) that address this network, e.g. `eth-mainnet.example.com`. */
  hosts?: string[];
}

/** One upstream node of a network. */
export interface UpstreamConfig {
  /** Name used in logs and the served-by header (default: derived from the network and position). */
  name?: string;
  /** The node's HTTP URL. Exactly one of `url` and `embedded` is required. */
  url?: string;
  /** An embedded upstream started by a plugin: `kind` or `kind#instance` (e.g. `anvil`, `anvil#b`). */
  embedded?: string;
  /** `primary` nodes serve traffic; `partner` providers only serve eligible calls when no primary can. */
  role?: 'primary' | 'partner';
  /** Extra headers sent to this upstream (an auth header, for example). */
  headers?: Record<string, string>;
  /** Timeout for one request to this upstream, in ms. */
  timeoutMs?: number;
  /** Maximum connections in this upstream's keep-alive pool. */
  connections?: number;
}

/** A network the gateway serves. */
export interface NetworkConfig {
  /** Unique network name, e.g. `eth-mainnet`. */
  name: string;
  /** The families whose methods this network offers, e.g. `[evm]` or `[evm, polygon]`. */
  families: string[];
  /** Where clients address the network. */
  base?: NetworkBaseConfig;
  /** The network's upstream nodes. */
  upstreams: UpstreamConfig[];
  /** Options the network's families read (embedded upstream options, for example). */
  options?: Record<string, unknown>;
}

/** Server and protocol limits. */
export interface ServerConfig {
  /** Interface to listen on (bundled gateway). */
  host: string;
  /** Port to listen on (bundled gateway); 0 picks a free one. */
  port: number;
  /** Largest accepted request body, in bytes. */
  maxBodyBytes: number;
  /** Largest accepted JSON-RPC batch, in calls. */
  maxBatchSize: number;
  /** How many calls of one batch run at once. */
  batchConcurrency: number;
  /** Whether responses carry the `X-Tollgate-Upstream` header naming the upstream that served. */
  servedByHeader: boolean;
}

/** Defaults for every upstream. */
export interface UpstreamDefaultsConfig {
  /** Timeout for one upstream request, in ms. */
  timeoutMs: number;
  /** Connect timeout, in ms. */
  connectTimeoutMs: number;
  /** Maximum connections per upstream pool. */
  connections: number;
  /** How long an idle keep-alive connection is kept, in ms. */
  keepAliveTimeoutMs: number;
}

/** Logging. */
export interface LogConfig {
  /** pino level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. */
  level: string;
}

/** The whole gateway configuration, after defaults were applied. */
export interface GatewayConfig {
  /** Server and protocol limits. */
  server: ServerConfig;
  /** Logging. */
  log: LogConfig;
  /** Plans by name. */
  plans: Record<string, PlanConfig>;
  /** API keys. */
  keys: KeyConfig[];
  /** Served networks. */
  networks: NetworkConfig[];
  /** Defaults for every upstream. */
  upstreamDefaults: UpstreamDefaultsConfig;
  /** Per-plugin settings, by plugin name. */
  plugins: Record<string, Record<string, unknown>>;
}

/** Configuration as a user writes it: everything with a default may be left out. */
export interface GatewayConfigInput {
  /** See {@link GatewayConfig.server}. */
  server?: Partial<ServerConfig>;
  /** See {@link GatewayConfig.log}. */
  log?: Partial<LogConfig>;
  /** See {@link GatewayConfig.plans}. Merged over the default plans. */
  plans?: Record<string, PlanConfig>;
  /** See {@link GatewayConfig.keys}. */
  keys?: KeyConfig[];
  /** See {@link GatewayConfig.networks}. */
  networks: NetworkConfig[];
  /** See {@link GatewayConfig.upstreamDefaults}. */
  upstreamDefaults?: Partial<UpstreamDefaultsConfig>;
  /** See {@link GatewayConfig.plugins}. */
  plugins?: Record<string, Record<string, unknown>>;
}
