/**
 * The instances one embedded-upstream provider started, by id (`kind#instance`): each is known from
 * the moment it is up until it stops, and `stopAll()` also waits for instances still starting.
 */
export class InstanceTracker<I extends { stop(): Promise<void> }> {
  readonly #started = new Map<string, I>();
  readonly #live = new Set<Promise<I>>();

  /** Tracks the instance `starting` resolves to under `id`; its `stop()` also forgets it. */
  track(id: string, starting: Promise<I>): Promise<I> {
    const tracked: Promise<I> = starting.then((inner) => {
      const instance: I = {
        ...inner,
        stop: async () => {
          await inner.stop();
          if (this.#started.get(id) === instance) this.#started.delete(id);
          this.#live.delete(tracked);
        },
      };
      this.#started.set(id, instance);
      return instance;
    });
    this.#live.add(tracked);
    tracked.catch(() => this.#live.delete(tracked));
    return tracked;
  }

  /** The running instance `id`, if any. */
  get(id: string): I | undefined {
    return this.#started.get(id);
  }

  /** Every running instance. */
  all(): I[] {
    return [...this.#started.values()];
  }

  /** Stops every instance, waiting for those still starting. */
  async stopAll(): Promise<void> {
    const all = await Promise.allSettled([...this.#live]);
    await Promise.allSettled(all.map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)));
  }
}
