import { Observable } from 'rxjs';
import type { MountedGateway } from './mount.js';
import type { UpstreamDrain } from './drains.js';

/** `source`, holding `drain`'s generation for as long as a subscription to it lasts. */
export function held<T>(drain: UpstreamDrain, source: Observable<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    drain.enter();
    subscriber.add(() => drain.leave());
    return source.subscribe(subscriber);
  });
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
        // A response emits 'close' once: no `once` wrapper needed.
        res.on('close', () => drain.leave());
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
