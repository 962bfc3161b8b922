/**
 * Load on a fleet through its balancer, over HTTP and WebSocket, counting for each key what the client
 * saw: results delivered, answers from a gateway, calls that got no gateway answer (their instance died
 * with them in flight, or the balancer answered instead), and every error by kind. Each answer also
 * records which instance sent it (HAProxy's `X-Fleet-Server` header) and when, so that the calls an
 * instance answered just before it was killed can be counted.
 */
import { Agent, request } from 'undici';
import { WebSocket } from 'ws';

/** What the client saw for one key. */
export interface KeyTally {
  /** Calls sent. */
  sent: number;
  /** Calls answered with a result: the calls that may be charged. */
  delivered: number;
  /** Calls a gateway answered (a result or a JSON-RPC error): the calls usage counts. */
  answered: number;
  /** Calls that got no gateway answer: a balancer error page, a transport error, or a WebSocket closed with the call in flight. */
  lost: number;
  /** Errors by kind: `rpc <code>/<HTTP status>`, `balancer <HTTP status>`, `balancer closed` (no answer), `transport <error code>`, `ws close <code>`. */
  readonly errors: Map<string, number>;
}

/** A gateway answer: which instance sent it, and when the client had it (ms since the epoch). */
export interface Answer {
  readonly key: string;
  readonly server: string;
  readonly at: number;
}

/** A load run. */
export interface FleetLoad {
  /** Tallies by API key. */
  readonly tallies: ReadonlyMap<string, KeyTally>;
  /** Every gateway answer, in the order received. */
  readonly answers: readonly Answer[];
  /** Results delivered over all keys. */
  delivered(): number;
  /** Errors of `kind` over all keys. */
  errors(kind: string): number;
  /** Stops sending, waits for every call in flight to end, closes the connections. */
  stop(): Promise<void>;
}

/** How much load, and on which keys. */
export interface FleetLoadOptions {
  /** The unix socket of the balancer's frontend. */
  readonly socketPath: string;
  /** The network's path (`/eth`). */
  readonly network: string;
  /** The JSON-RPC method every call makes. */
  readonly method: string;
  /** Keys sent over HTTP, each with this many loops (one call in flight per loop). */
  readonly http: ReadonlyArray<{ readonly key: string; readonly loops: number }>;
  /** Keys sent over WebSocket: this many connections, each keeping `inFlight` calls going. */
  readonly ws: ReadonlyArray<{ readonly key: string; readonly connections: number; readonly inFlight: number }>;
}

function tallyOf(tallies: Map<string, KeyTally>, key: string): KeyTally {
  let tally = tallies.get(key);
  if (tally === undefined) tallies.set(key, (tally = { sent: 0, delivered: 0, answered: 0, lost: 0, errors: new Map() }));
  return tally;
}

function count(tally: KeyTally, kind: string): void {
  tally.errors.set(kind, (tally.errors.get(kind) ?? 0) + 1);
}

/** Parses a gateway's JSON-RPC answer; undefined for anything else (a balancer's HTML page). */
function rpcAnswer(text: string): { result?: unknown; error?: { code: number } } | undefined {
  try {
    const body = JSON.parse(text) as unknown;
    return typeof body === 'object' && body !== null && ('result' in body || 'error' in body) ? (body as { result?: unknown; error?: { code: number } }) : undefined;
  } catch {
    return undefined;
  }
}

/** Starts the load; it runs until {@link FleetLoad.stop}. */
export function startFleetLoad(options: FleetLoadOptions): FleetLoad {
  const tallies = new Map<string, KeyTally>();
  const answers: Answer[] = [];
  const loops = options.http.reduce((n, h) => n + h.loops, 0);
  const agent = new Agent({ connections: Math.max(1, loops), connect: { socketPath: options.socketPath } });
  let stopping = false;
  let nextId = 0;
  const stopHooks = new Set<() => void>();
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: options.method, params: [] });

  const httpLoop = async (key: string): Promise<void> => {
    const tally = tallyOf(tallies, key);
    const url = `http://fleet${options.network}/v3/${key}`;
    while (!stopping) {
      tally.sent++;
      try {
        const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
        const text = await res.body.text();
        const answer = rpcAnswer(text);
        if (answer === undefined) {
          tally.lost++;
          count(tally, `balancer ${res.statusCode}`);
          continue;
        }
        tally.answered++;
        answers.push({ key, server: String(res.headers['x-fleet-server'] ?? ''), at: Date.now() });
        if (answer.error !== undefined) count(tally, `rpc ${answer.error.code}/${res.statusCode}`);
        else if (res.statusCode === 200) tally.delivered++;
      } catch (error) {
        tally.lost++;
        // undici's "other side closed": the balancer closed the connection without an answer.
        const code = (error as { code?: string }).code;
        count(tally, code === 'UND_ERR_SOCKET' ? 'balancer closed' : `transport ${code ?? (error as Error).message}`);
      }
    }
  };

  // One WebSocket client: keeps `inFlight` calls going; when the connection ends, its calls in flight are
  // lost and it connects again (through the balancer, to whichever instance is up).
  const wsClient = async (key: string, inFlight: number): Promise<void> => {
    const tally = tallyOf(tallies, key);
    const url = `ws+unix://${options.socketPath}:${options.network}/ws/v3/${key}`;
    while (!stopping) {
      const pending = new Set<number>();
      let server = '';
      const socket = new WebSocket(url);
      socket.on('upgrade', (res) => (server = String(res.headers['x-fleet-server'] ?? '')));
      const send = (): void => {
        const id = nextId++;
        pending.add(id);
        tally.sent++;
        socket.send(JSON.stringify({ jsonrpc: '2.0', id, method: options.method, params: [] }));
      };
      const close = (): void => { if (socket.readyState === WebSocket.OPEN) socket.close(1000); };
      // Told to stop: close once nothing is in flight (now, or when the last answer comes).
      const onStop = (): void => { if (pending.size === 0) close(); };
      stopHooks.add(onStop);
      socket.on('open', () => {
        if (stopping) close();
        else for (let i = 0; i < inFlight; i++) send();
      });
      socket.on('message', (data) => {
        const answer = rpcAnswer(String(data)) as { id?: number; result?: unknown; error?: { code: number } } | undefined;
        if (answer?.id === undefined || !pending.delete(answer.id)) return;
        tally.answered++;
        answers.push({ key, server, at: Date.now() });
        if (answer.error !== undefined) count(tally, `rpc ${answer.error.code}/ws`);
        else tally.delivered++;
        if (!stopping) send();
        else if (pending.size === 0) close();
      });
      socket.on('error', () => { /* the close that follows counts it */ });
      const code = await new Promise<number>((resolve) => socket.once('close', (closeCode) => resolve(closeCode)));
      stopHooks.delete(onStop);
      if (code !== 1000 || pending.size > 0) count(tally, `ws close ${code}`);
      tally.lost += pending.size;
      if (!stopping) await new Promise((resolve) => setTimeout(resolve, 50)); // a client's reconnect backoff
    }
  };

  const running = Promise.all([
    ...options.http.flatMap((h) => Array.from({ length: h.loops }, () => httpLoop(h.key))),
    ...options.ws.flatMap((w) => Array.from({ length: w.connections }, () => wsClient(w.key, w.inFlight))),
  ]);
  return {
    tallies,
    answers,
    delivered: () => [...tallies.values()].reduce((n, t) => n + t.delivered, 0),
    errors: (kind) => [...tallies.values()].reduce((n, t) => n + (t.errors.get(kind) ?? 0), 0),
    async stop() {
      stopping = true;
      stopHooks.forEach((hook) => hook());
      await running;
      await agent.close();
    },
  };
}
