import t from 'tap';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ConfigError } from '../core/index.js';
import { httpTransport } from '../plugins/http/index.js';
import { wsTransport } from '../plugins/ws/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { EVM_METHODS } from '../plugins/evm/methods.js';
import { devnet } from '@tollgate/devnet';
import { otel } from '../plugins/otel/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { openWs } from './helpers/ws-client.js';
import { closedPort } from './helpers/closed-port.js';

// Traces of calls against an Anvil devnet, read back from an in-memory exporter; and one export over
// OTLP/HTTP to a listening collector endpoint.

const KEY = 'otel-test-key-000001';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const dead = await closedPort();
const exporter = new InMemorySpanExporter();
const gw = await startTestGateway(
  {
    keys: [{ key: KEY, id: 'traced', plan: 'growth' }],
    networks: [
      { name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil' }] },
      { name: 'down', families: ['evm'], upstreams: [{ url: `http://127.0.0.1:${dead}` }] },
    ],
    plugins: { otel: { enabled: true } },
  },
  [httpTransport(), wsTransport(), evmFamily(), otel({ exporter }), devnet()],
);
t.teardown(() => gw.close());

const call = (network: string, method: string, headers: Record<string, string> = {}, key = KEY): ReturnType<typeof post> =>
  post(gw.url(network, key), rpc(method, []), { 'content-type': 'application/json', ...headers });

function callSpans(): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER);
}
function childrenOf(span: ReadableSpan): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.parentSpanContext?.spanId === span.spanContext().spanId);
}

t.beforeEach(() => exporter.reset());

t.test('a served call: one span, a child of the client\'s traceparent, an event per stage, one attempt span', async (t) => {
  const res = await call('eth', 'eth_blockNumber', { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` });
  t.equal(res.status, 200);
  const [span, ...others] = callSpans();
  t.equal(others.length, 0, 'one call span');
  t.equal(span!.name, 'eth eth_blockNumber');
  t.equal(span!.spanContext().traceId, TRACE_ID, 'in the client\'s trace');
  t.equal(span!.parentSpanContext?.spanId, PARENT_ID, 'a child of the client\'s span');
  t.same(span!.events.map((e) => e.name), ['authenticate', 'validate', 'meter', 'enforceLimits', 'route', 'dispatch', 'checkResult'], 'an event as each stage completes, in order');
  t.match(span!.attributes, { 'rpc.system': 'jsonrpc', 'rpc.method': 'eth_blockNumber', 'tollgate.network': 'eth', 'tollgate.transport': 'http', 'tollgate.key.id': 'traced', 'tollgate.attempts': 1, 'tollgate.credits': EVM_METHODS.find((m) => m.name === 'eth_blockNumber')!.credits });
  t.equal(span!.status.code, SpanStatusCode.OK);
  const attempts = childrenOf(span!);
  t.equal(attempts.length, 1, 'one attempt span');
  t.equal(attempts[0]!.kind, SpanKind.CLIENT);
  t.equal(attempts[0]!.spanContext().traceId, TRACE_ID);
  t.equal(attempts[0]!.status.code, SpanStatusCode.OK);
  t.ok(attempts[0]!.startTime[0] * 1e9 + attempts[0]!.startTime[1] >= span!.startTime[0] * 1e9 + span!.startTime[1], 'the attempt starts inside the call');
});

t.test('without traceparent: a new trace; a malformed one is ignored', async (t) => {
  await call('eth', 'eth_chainId');
  await call('eth', 'eth_chainId', { traceparent: 'garbage' });
  const spans = callSpans();
  t.equal(spans.length, 2);
  for (const span of spans) t.equal(span.parentSpanContext, undefined, 'a root span');
  t.not(spans[0]!.spanContext().traceId, spans[1]!.spanContext().traceId, 'each its own trace');
});

t.test('a call no upstream answers: failed attempt spans and an error status', async (t) => {
  const res = await call('down', 'eth_chainId');
  t.equal(res.status, 503);
  const [span] = callSpans();
  t.equal(span!.status.code, SpanStatusCode.ERROR);
  t.match(span!.attributes, { 'rpc.jsonrpc.error_code': -33503, 'http.response.status_code': 503, 'tollgate.credits': 0 });
  t.same(span!.events.map((e) => e.name), ['authenticate', 'validate', 'meter', 'enforceLimits', 'route'], 'no event after the stage that failed');
  const attempts = childrenOf(span!);
  t.ok(attempts.length >= 1, 'the attempts are traced');
  t.equal(attempts.length, span!.attributes['tollgate.attempts'], 'one span per attempt');
  for (const attempt of attempts) {
    t.equal(attempt.status.code, SpanStatusCode.ERROR);
    t.type(attempt.attributes['tollgate.failure'], 'string');
  }
});

t.test('a refused key: a span with the refusal and no attempt', async (t) => {
  const res = await call('eth', 'eth_chainId', {}, 'not-a-key-000000000');
  t.equal(res.status, 401);
  const [span] = callSpans();
  t.equal(span!.status.code, SpanStatusCode.ERROR);
  t.equal(span!.attributes['rpc.jsonrpc.error_code'], -33001);
  t.same(span!.events, [], 'authenticate did not complete');
  t.equal(childrenOf(span!).length, 0);
  t.equal(span!.attributes['tollgate.key.id'], undefined, 'no key id for an unknown key');
});

t.test('WebSocket: every message is a span in the trace of the upgrade request', async (t) => {
  const ws = await openWs(gw.url('eth', KEY).replace('http:', 'ws:').replace('/v3/', '/ws/v3/'), { headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` } });
  t.teardown(() => ws.close());
  ws.send(rpc('eth_chainId', [], 1));
  ws.send(rpc('eth_blockNumber', [], 2));
  await ws.waitFor(2);
  // The span ends as the answer is handed to the transport; both answers arrived, so both ended.
  const spans = callSpans();
  t.equal(spans.length, 2);
  for (const span of spans) {
    t.equal(span.spanContext().traceId, TRACE_ID);
    t.equal(span.attributes['tollgate.transport'], 'ws');
  }
});

t.test('OTLP/HTTP export reaches the collector endpoint when the gateway stops', async (t) => {
  const bodies: Array<{ path: string; body: string }> = [];
  const collector = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.setEncoding('latin1');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      bodies.push({ path: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => collector.close(() => resolve())));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;
  const exporting = await startTestGateway(
    {
      keys: [{ key: KEY, id: 'traced', plan: 'growth' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil' }] }],
      plugins: { otel: { enabled: true, endpoint, serviceName: 'gateway-under-test' } },
    },
    [httpTransport(), evmFamily(), otel(), devnet()],
  );
  t.equal((await post(exporting.url('eth', KEY), rpc('eth_chainId', []), { 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` })).status, 200);
  await exporting.close();
  t.ok(bodies.length >= 1, 'the collector got an export');
  t.equal(bodies[0]!.path, '/v1/traces');
  const all = bodies.map((b) => b.body).join('');
  t.ok(all.includes('gateway-under-test'), 'with the service name');
  t.ok(all.includes('eth eth_chainId'), 'and the call span');
});

t.test('off by default, and settings are checked', async (t) => {
  const quiet = new InMemorySpanExporter();
  const off = await startTestGateway(
    { keys: [{ key: KEY, id: 'traced', plan: 'growth' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil' }] }] },
    [httpTransport(), evmFamily(), otel({ exporter: quiet }), devnet()],
  );
  t.teardown(() => off.close());
  t.equal((await post(off.url('eth', KEY), rpc('eth_chainId', []))).status, 200);
  t.equal(quiet.getFinishedSpans().length, 0, 'no span without enabled: true');
  t.throws(() => otel({ enabled: 'yes' as unknown as boolean }), new ConfigError(['otel().enabled: must be boolean']));
  const error = await startTestGateway(
    { networks: [{ name: 'x', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:1' }] }], plugins: { otel: { endpoint: 'collector:4318', colour: 1 } } },
    [evmFamily(), otel()],
  ).then(() => undefined, (e: unknown) => e);
  t.same((error as ConfigError).problems, ['plugins.otel.colour: is not a known field', 'plugins.otel.endpoint: must match pattern "^https?://\\S+$"']);
});
