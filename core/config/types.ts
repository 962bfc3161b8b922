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
  /**
   * The node's WebSocket URL, beside its HTTP one (`ws://` or `wss://`). Subscriptions reach the node over
   * it; an upstream without one serves calls only. An embedded upstream supplies its own.
   */
  wsUrl?: string;
  /** An embedded upstream started by a plugin: `kind` or `kind#instance`. */
  embedded?: string;
  /** `primary` nodes serve traffic; `partner` providers only serve eligible calls when no primary can. */
  role?: 'primary' | 'partner';
  /** Extra headers sent to this upstream (an auth header, for example). */
  headers?: Record<string, string>;
  /** Timeout for one request to this upstream, in ms. */
  timeoutMs?: number;
  /** Maximum connections in this upstream's keep-alive pool. */
  connections?: number;
  /** Share of traffic relative to the other primaries at the head (default 1; 2 takes twice the share). */
  weight?: number;
  /** The upstream's own plan, kept for the whole deployment: calls beyond it go to other upstreams. */
  budget?: UpstreamBudgetConfig;
}

/** An upstream's own plan (a partner provider's), kept for every instance sharing the store. */
export interface UpstreamBudgetConfig {
  /** Requests per second the provider accepts (one-second windows of the gateway clock). */
  maxRequestsPerSecond?: number;
  /** Credits per UTC day sent to it, counted in the methods' credits. */
  dailyCredits?: number;
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
  /** This network's failover settings; each field present overrides the top-level {@link GatewayConfig.failover}. */
  failover?: NetworkFailoverConfig;
  /** What a call of a method none of the network's families defines gets (default: refused with -32601). */
  unknownMethods?: UnknownMethodsConfig;
}

/**
 * The policy for methods no family of a network defines. Under `forward`, only the listed names are
 * forwarded: methods in `namespaces`, and the `methods` named one by one; any other name gets -32601
 * without a node being asked.
 */
export interface UnknownMethodsConfig {
  /** `refuse`: -32601 without asking a node; `forward`: the listed names are sent to the network's primaries as the client wrote them. */
  policy: 'refuse' | 'forward';
  /** Credits a forwarded call costs (the node's answer, error or not, is charged like any answer). */
  credits: number;
  /**
   * Namespaces whose methods are forwarded: the part of a method's name before its first `_` (`eth`,
   * `trace`). Default: none. A namespace the network's families mark as the node's administration
   * (`NetworkFamily.adminNamespaces`) cannot be listed here: name its methods one by one in `methods`.
   */
  namespaces?: string[];
  /** Methods forwarded by their full name, whatever their namespace (except one the families switched off). */
  methods?: string[];
}

/** The circuit breaker of every upstream. */
export interface BreakerConfig {
  /** Consecutive failures (calls or probes) that open the breaker. */
  failureThreshold: number;
  /** How long an open breaker keeps the upstream out before one trial (a probe) may close it, in ms. */
  cooldownMs: number;
}

/** Active health probes: each network family's own probe call, on networks with two or more upstreams. */
export interface ProbeConfig {
  /** Time between probes of each upstream, in ms; 0 turns active probing off. */
  intervalMs: number;
  /** Timeout of one probe, in ms. */
  timeoutMs: number;
}

/** Hedged reads: a second attempt of an idempotent call when the first is slow. */
export interface HedgeConfig {
  /** Whether calls are hedged. */
  enabled: boolean;
  /** The hedge starts after this many times the lowest measured latency among the call's upstreams. */
  latencyMultiplier: number;
  /** The hedge never starts sooner, ms (also the delay while no latency is measured). */
  minDelayMs: number;
}

/** Health checking, circuit breaking, retries and partner failover. */
export interface FailoverConfig {
  /** Primaries tried per call before giving up; partners, when the call is eligible, are tried after them. */
  maxAttempts: number;
  /** Overall time for all attempts of one call, in ms: no attempt starts after it, and an attempt's timeout is cut to what is left. */
  deadlineMs: number;
  /** A primary more than this many blocks behind the highest head of the live primaries gets no traffic. */
  maxLagBlocks: number;
  /** The circuit breaker of every upstream. */
  breaker: BreakerConfig;
  /** Active health probes. */
  probe: ProbeConfig;
  /** How long an upstream that answered "method not found" (-32601) for a method is skipped for that method, ms; 0: never. */
  methodBanMs: number;
  /** Hedged reads. */
  hedge: HedgeConfig;
  /** Methods that may go to a partner provider (default: those their family marks `failover: true`). */
  methods?: string[];
  /** Plans whose calls may go to a partner provider (default: the plans with `failover: true`). */
  plans?: string[];
}

/** A network's own failover settings: any field left out is taken from the top-level {@link FailoverConfig}. */
export interface NetworkFailoverConfig {
  /** See {@link FailoverConfig.maxAttempts}. */
  maxAttempts?: number;
  /** See {@link FailoverConfig.deadlineMs}. */
  deadlineMs?: number;
  /** See {@link FailoverConfig.maxLagBlocks}. */
  maxLagBlocks?: number;
  /** See {@link FailoverConfig.breaker}. */
  breaker?: Partial<BreakerConfig>;
  /** See {@link FailoverConfig.probe}. */
  probe?: Partial<ProbeConfig>;
  /** See {@link FailoverConfig.methodBanMs}. */
  methodBanMs?: number;
  /** See {@link FailoverConfig.hedge}. */
  hedge?: Partial<HedgeConfig>;
  /** See {@link FailoverConfig.methods}. */
  methods?: string[];
  /** See {@link FailoverConfig.plans}. */
  plans?: string[];
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
  /** Worker processes serving the port (bundled gateway); `auto`: one per available core. */
  workers: number | 'auto';
  /** How long stopping the workers may take before those still running are killed, in ms. */
  drainTimeoutMs: number;
  /**
   * Balancers and proxies whose `X-Forwarded-For` is believed: addresses, CIDR ranges
   * and the keywords `loopback`, `private`, `linklocal`. Empty (the default): the peer is the client.
   */
  trustedProxies: string[];
  /**
   * A listener of its own for the operator routes (admin API, dashboard, metrics), which the public
   * port then answers 404. Absent (the default): every route is on the public port.
   */
  adminListen?: {
    /** Interface to listen on (default `127.0.0.1`). */
    host: string;
    /** Port to listen on; 0 picks a free one. */
    port: number;
  };
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
  /** Health checking, circuit breaking, retries and partner failover (a network may override any field). */
  failover: FailoverConfig;
  /** Per-plugin settings, by plugin name. */
  plugins: Record<string, Record<string, unknown>>;
}

/** Configuration as a user writes it: everything with a default may be left out. */
export interface GatewayConfigInput {
  /** See {@link GatewayConfig.server}. */
  server?: Partial<Omit<ServerConfig, 'adminListen'>> & {
    /** See {@link ServerConfig.adminListen}; `host` defaults to `127.0.0.1`. */
    adminListen?: {
      /** Interface to listen on (default `127.0.0.1`). */
      host?: string;
      /** Port to listen on; 0 picks a free one. */
      port: number;
    };
  };
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
  /** See {@link GatewayConfig.failover}. */
  failover?: NetworkFailoverConfig;
  /** See {@link GatewayConfig.plugins}. */
  plugins?: Record<string, Record<string, unknown>>;
}
