/**
 * The failover fields, shared by the top-level `failover` section (with defaults) and a network's own
 * `failover` (without, so that an absent field falls back to the top level).
 */
function failoverProperties(defaults: boolean): Record<string, unknown> {
  const d = (value: unknown): { default?: unknown } => (defaults ? { default: value } : {});
  return {
    maxAttempts: { type: 'integer', minimum: 1, ...d(3), description: 'Primaries tried per call before giving up (partners, when eligible, are tried after them).' },
    deadlineMs: { type: 'integer', minimum: 1, ...d(30000), description: 'Overall time for all attempts of one call, ms: no attempt starts after it, and an attempt\'s timeout is cut to what is left.' },
    maxLagBlocks: { type: 'integer', minimum: 0, ...d(5), description: 'A primary whose head is more than this many blocks behind the highest head of the live primaries gets no traffic.' },
    breaker: {
      type: 'object',
      additionalProperties: false,
      ...d({}),
      description: 'The circuit breaker of every upstream.',
      properties: {
        failureThreshold: { type: 'integer', minimum: 1, ...d(5), description: 'Consecutive failures (calls or probes) that open the breaker.' },
        cooldownMs: { type: 'integer', minimum: 1, ...d(5000), description: 'How long an open breaker keeps the upstream out before one trial (a probe) may close it, ms.' },
      },
    },
    probe: {
      type: 'object',
      additionalProperties: false,
      ...d({}),
      description: 'Active health probes (each network family\'s own probe call), sent on networks with two or more upstreams.',
      properties: {
        intervalMs: { type: 'integer', minimum: 0, ...d(2000), description: 'Time between probes of each upstream, ms; 0 turns active probing off.' },
        timeoutMs: { type: 'integer', minimum: 1, ...d(2000), description: 'Timeout of one probe, ms.' },
      },
    },
    hedge: {
      type: 'object',
      additionalProperties: false,
      ...d({}),
      description: 'Hedged reads: a second attempt of an idempotent call goes to another primary when the first has not answered in time; the first answer wins.',
      properties: {
        enabled: { type: 'boolean', ...d(false), description: 'Turns hedging on (per network, or for all).' },
        latencyMultiplier: { type: 'number', minimum: 1, ...d(3), description: 'The hedge starts after this many times the lowest measured latency among the call\'s upstreams.' },
        minDelayMs: { type: 'integer', minimum: 1, ...d(20), description: 'The hedge never starts sooner than this, ms (also the delay while no latency is measured).' },
      },
    },
    methodBanMs: { type: 'integer', minimum: 0, ...d(300000), description: 'How long an upstream that answered "method not found" (-32601) for a method is skipped for that method, ms; 0: never skipped.' },
    methods: { type: 'array', items: { type: 'string' }, description: 'Methods that may go to a partner provider (default: those their family marks failover-eligible).' },
    plans: { type: 'array', items: { type: 'string' }, description: 'Plans whose calls may go to a partner provider (default: plans with failover: true).' },
  };
}

/**
 * JSON Schema of the gateway configuration. It is the single source of truth for validation, defaults
 * and the configuration reference in the docs.
 */
export const configSchema: Readonly<Record<string, unknown>> = {
  $id: 'https://tollgate.dev/schemas/config.json',
  type: 'object',
  additionalProperties: false,
  required: ['networks'],
  properties: {
    server: {
      type: 'object',
      description: 'Server and protocol limits.',
      additionalProperties: false,
      default: {},
      properties: {
        host: { type: 'string', default: '127.0.0.1', description: 'Interface the bundled gateway listens on.' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 8545, description: 'Port the bundled gateway listens on; 0 picks a free one.' },
        maxBodyBytes: { type: 'integer', minimum: 1024, default: 1048576, description: 'Largest accepted request body in bytes (larger: HTTP 413).' },
        maxBatchSize: { type: 'integer', minimum: 1, default: 100, description: 'Largest accepted JSON-RPC batch, in calls.' },
        batchConcurrency: { type: 'integer', minimum: 1, default: 16, description: 'How many calls of one batch run at once.' },
        servedByHeader: { type: 'boolean', default: true, description: 'Send the X-Tollgate-Upstream header naming the upstream that served a call.' },
        workers: {
          oneOf: [{ type: 'integer', minimum: 1 }, { const: 'auto' }],
          default: 1,
          description: 'Worker processes serving the port (bundled gateway); auto: one per available core. More than 1 needs a store the processes share (not one in memory).',
        },
        drainTimeoutMs: { type: 'integer', minimum: 0, default: 30000, description: 'How long stopping the workers may take (calls in flight answered, WebSockets closed) before those still running are killed.' },
        trustedProxies: {
          type: 'array',
          items: { type: 'string', minLength: 1 },
          default: [],
          description: 'Balancers and proxies whose X-Forwarded-For is believed: addresses, CIDR ranges (IPv4, IPv6) and the keywords loopback, private, linklocal. The client address is then the rightmost hop that is not one of them; other peers\' headers are ignored.',
        },
        adminListen: {
          type: 'object',
          additionalProperties: false,
          required: ['port'],
          properties: {
            host: { type: 'string', default: '127.0.0.1', description: 'Interface of the operator listener.' },
            port: { type: 'integer', minimum: 0, maximum: 65535, description: 'Port of the operator listener; 0 picks a free one.' },
          },
          description: 'A second listener for the operator routes (admin API, dashboard, /metrics): when set, they are served there only and the public port answers them 404.',
        },
      },
    },
    log: {
      type: 'object',
      description: 'Logging.',
      additionalProperties: false,
      default: {},
      properties: {
        level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info', description: 'Log level.' },
      },
    },
    plans: {
      type: 'object',
      description: 'Plans by name, merged over the default plans (core, developer, team, growth, custom).',
      default: {},
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['dailyCredits', 'creditsPerSecond', 'failover'],
        properties: {
          dailyCredits: { type: 'integer', minimum: 0, description: 'Credits per UTC day.' },
          creditsPerSecond: { type: 'number', exclusiveMinimum: 0, description: 'Sustained throughput, credits per second.' },
          failover: { type: 'boolean', description: 'Whether eligible calls may go to a partner provider.' },
        },
      },
    },
    keys: {
      type: 'array',
      description: 'API keys.',
      default: [],
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['key', 'plan'],
        properties: {
          key: { type: 'string', pattern: '^[A-Za-z0-9_-]{8,128}$', description: 'The API key clients put in the URL.' },
          id: { type: 'string', minLength: 1, description: 'Loggable id of the key (default derived from a hash of the key).' },
          plan: { type: 'string', description: 'Name of the key\'s plan.' },
          secret: { type: 'string', minLength: 8, description: 'The key\'s secret, for APIs that take one (the file-storage API\'s HTTP basic password). Only its scrypt hash is kept in memory.' },
          secretHash: { type: 'string', pattern: '^scrypt\\$[A-Za-z0-9+/]+={0,2}\\$[A-Za-z0-9+/]+={0,2}$', description: 'The secret already hashed (scrypt$<salt>$<hash>, from hashSecret), so the file need not hold it; wins over secret.' },
          settings: { type: 'object', description: 'Free-form settings read by plugins.' },
        },
      },
    },
    networks: {
      type: 'array',
      minItems: 1,
      description: 'Served networks.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'families', 'upstreams'],
        properties: {
          name: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$', description: 'Unique network name.' },
          families: { type: 'array', minItems: 1, items: { type: 'string' }, description: 'Families whose methods the network offers: names that family plugins register.' },
          base: {
            type: 'object',
            additionalProperties: false,
            description: 'Where clients address the network (default: path prefix /<name>).',
            properties: {
              path: { type: 'string', pattern: '^/', description: 'Path prefix, e.g. /eth-mainnet; / for none.' },
              hosts: { type: 'array', items: { type: 'string' }, description: 'Host names that address the network.' },
            },
          },
          upstreams: {
            type: 'array',
            minItems: 1,
            description: 'Upstream nodes.',
            items: {
              type: 'object',
              additionalProperties: false,
              oneOf: [{ required: ['url'] }, { required: ['embedded'] }],
              properties: {
                name: { type: 'string', description: 'Name in logs and the served-by header.' },
                url: { type: 'string', pattern: '^https?://', description: 'The node\'s HTTP URL.' },
                wsUrl: { type: 'string', pattern: '^wss?://', description: 'The node\'s ws:// or wss:// URL, beside its HTTP one: subscriptions (and calls of clients connected over ws://) reach the node over it.' },
                embedded: { type: 'string', description: 'Embedded upstream kind provided by a plugin, optionally #instance (kind#name).' },
                role: { enum: ['primary', 'partner'], default: 'primary', description: 'primary serves traffic; partner only eligible calls when no primary can.' },
                headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Extra headers sent upstream (auth).' },
                timeoutMs: { type: 'integer', minimum: 1, description: 'Request timeout for this upstream, ms.' },
                connections: { type: 'integer', minimum: 1, description: 'Keep-alive pool size for this upstream.' },
                weight: { type: 'number', exclusiveMinimum: 0, default: 1, description: 'Share of traffic relative to the other primaries at the head (2 takes twice the share of 1).' },
                budget: {
                  type: 'object',
                  additionalProperties: false,
                  description: 'The upstream\'s own plan (a partner provider\'s), kept for every instance sharing the store: calls beyond it go to other upstreams, else get -33503.',
                  properties: {
                    maxRequestsPerSecond: { type: 'number', exclusiveMinimum: 0, description: 'Requests per second the provider accepts (one-second windows).' },
                    dailyCredits: { type: 'integer', minimum: 0, description: 'Credits per UTC day sent to it, counted in the methods\' credits.' },
                  },
                },
              },
            },
          },
          options: { type: 'object', description: 'Options read by the network\'s families and embedded upstreams.' },
          failover: {
            type: 'object',
            additionalProperties: false,
            description: 'This network\'s failover settings, each overriding the top-level failover field of the same name.',
            properties: failoverProperties(false),
          },
          unknownMethods: {
            type: 'object',
            additionalProperties: false,
            required: ['policy'],
            description: 'What a call of a method none of the network\'s families defines gets (default: refused with -32601, no node asked).',
            properties: {
              policy: { enum: ['refuse', 'forward'], description: 'refuse: -32601 without asking a node; forward: the names listed in namespaces and methods are sent to the network\'s primaries unchanged, never resent, never to a partner; any other name is refused as under refuse.' },
              credits: { type: 'integer', minimum: 0, default: 80, description: 'Credits a forwarded call costs.' },
              namespaces: {
                type: 'array',
                uniqueItems: true,
                items: { type: 'string', pattern: '^[A-Za-z0-9]+$', problem: 'must be a namespace without its "_" (eth, trace)' },
                description: 'forward: namespaces whose methods are forwarded (the part of a name before its first _, e.g. eth, trace); default none. Namespaces the network\'s families mark as the node administration (admin, debug...) cannot be listed: name their methods in methods.',
              },
              methods: {
                type: 'array',
                uniqueItems: true,
                items: { type: 'string', minLength: 1 },
                description: 'forward: methods forwarded by their full name, whatever their namespace (never one in a namespace the network switched off, such as a disabled debug).',
              },
            },
          },
        },
      },
    },
    upstreamDefaults: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Defaults for every upstream.',
      properties: {
        timeoutMs: { type: 'integer', minimum: 1, default: 30000, description: 'Request timeout, ms.' },
        connectTimeoutMs: { type: 'integer', minimum: 1, default: 5000, description: 'Connect timeout, ms.' },
        connections: { type: 'integer', minimum: 1, default: 64, description: 'Keep-alive pool size.' },
        keepAliveTimeoutMs: { type: 'integer', minimum: 1, default: 30000, description: 'Idle keep-alive time, ms.' },
      },
    },
    failover: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Health checking, circuit breaking, retries and partner failover of every network (see docs/failover.md).',
      properties: failoverProperties(true),
    },
    plugins: {
      type: 'object',
      default: {},
      description: 'Settings of individual plugins, by plugin name.',
      additionalProperties: { type: 'object' },
    },
  },
};
