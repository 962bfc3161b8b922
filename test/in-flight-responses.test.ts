// The in-flight count of a transport: real requests to a real node:http server.
import t from 'tap';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { InFlightResponses } from '../core/transport-api.js';

t.test('each response counts once, until it closes; drain waits for the last', async (t) => {
  const inFlight = new InFlightResponses();
  const held: ServerResponse[] = [];
  let arrived: () => void = () => {};
  const server = createServer((_req, res) => {
    inFlight.track(res);
    inFlight.track(res); // a second claim of the same response is no second call
    held.push(res);
    arrived();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  const both = new Promise<void>((resolve) => { arrived = () => { if (held.length === 2) resolve(); }; });
  const answers = [request(url).then((r) => r.body.text()), request(url).then((r) => r.body.text())];
  await both;
  t.equal(inFlight.size, 2, 'two responses in flight, each tracked twice');

  let drained = false;
  const drain = inFlight.drain(60_000).then(() => { drained = true; });
  // The count's own listener was added first, so it has run when this one runs.
  const firstClosed = new Promise((resolve) => held[0]!.once('close', resolve));
  held[0]!.end('a');
  t.equal(await answers[0], 'a');
  await firstClosed;
  t.equal(inFlight.size, 1, 'the answered one no longer counts');
  inFlight.track(held[0]!);
  t.equal(inFlight.size, 1, 'a response tracked again after it closed does not count again');
  t.equal(drained, false, 'drain still waits for the other');
  held[1]!.end('b');
  await drain;
  t.equal(await answers[1], 'b');
  t.equal(inFlight.size, 0);
  t.equal(drained, true);
});

t.test('a response whose client went away stops counting too; drain gives up after its timeout', async (t) => {
  const inFlight = new InFlightResponses();
  let closed: () => void = () => {};
  const gone = new Promise<void>((resolve) => { closed = resolve; });
  let kept: ServerResponse | undefined;
  let arrived: () => void = () => {};
  const both = new Promise<void>((resolve) => { arrived = resolve; });
  let count = 0;
  const server = createServer((_req, res) => {
    inFlight.track(res);
    count++;
    if (count === 1) res.once('close', () => closed());
    else kept = res;
    if (count === 2) arrived();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const controller = new AbortController();
  const abandoned = request(url, { signal: controller.signal }).catch(() => 'aborted');
  const waiting = request(url).then((r) => r.body.text());
  await both;
  t.equal(inFlight.size, 2);
  controller.abort();
  t.equal(await abandoned, 'aborted');
  await gone;
  t.equal(inFlight.size, 1, 'the abandoned response closed and left the count');
  await inFlight.drain(50);
  t.equal(inFlight.size, 1, 'drain returned at its timeout with one response still open');
  kept!.end('done');
  t.equal(await waiting, 'done');
});
