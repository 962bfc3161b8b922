import { Observable } from 'rxjs';
import type { RequestContext } from '../contracts/request-context.js';
import type { MountedGateway } from './mount.js';
import type { Drains, UpstreamDrain } from './drains.js';

/** `source`, holding `drain`'s generation for as long as a subscription to it lasts. */
export function held<T>(drain: UpstreamDrain, source: Observable<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    drain.enter();
    subscriber.add(() => drain.leave());
    return source.subscribe(subscriber);
  });
}

/**
 * `run`, held on the generation that built the call's network (else on `current`): a reload does not
 * close the upstreams of a call it overtook, nor those a connection opened before it still uses.
 */
export function heldCall(drains: Drains, current: UpstreamDrain, ctx: RequestContext, run: Observable<RequestContext>): Observable<RequestContext> {
  return held(drains.ownerOf(ctx.network) ?? current, run);
}

/**
 * `handlers`, holding the current generation from a request's arrival until its answer closes, and from
 * an upgrade a transport took until its socket closes: a transport picks the request's network when it
 * arrives, and a WebSocket keeps it for the connection's life.
 */
export function heldHandlers(handlers: MountedGateway, current: () => UpstreamDrain | undefined): MountedGateway {
  return {
    listener(req, res, next) {
      const drain = current();
      if (drain !== undefined) {
        drain.enter();
        res.once('close', () => drain.leave());
      }
      handlers.listener(req, res, next);
    },
    upgrade(req, socket, head) {
      const drain = current();
      drain?.enter();
      let took = false;
      try {
        took = handlers.upgrade(req, socket, head);
      } finally {
        if (drain !== undefined) {
          if (!took || socket.closed) drain.leave();
          else socket.once('close', () => drain.leave());
        }
      }
      return took;
    },
  };
}
