/**
 * Response serializers compiled on first use rather than while the app gets ready. Compiling
 * every route's serializers (a fast-json-stringify build per route and status, each of which
 * validates the shared schemas again) took about 3 s of CPU of every start before the service
 * could answer. Now a route's first answer compiles its own (tens of ms at most), and `warm()`
 * compiles the rest in the background once the app is ready, with pauses between them.
 * The compiled functions are Fastify's default ones: the bytes served are the same.
 */

import {
  type SerializerFactory as BuildSerializer,
  type Serializer as Serialize,
  SerializerSelector,
} from '@fastify/fast-json-stringify-compiler';

export interface LazySerializers {
  /** For Fastify's `schemaController.compilersFactory.buildSerializer`. */
  readonly buildSerializer: BuildSerializer;
  /** Serializers not compiled yet. */
  readonly pending: number;
  /**
   * Compiles the serializers not compiled yet, one at a time with a pause after each (four
   * times its compile time), until none is left or `stopped()` says so; a schema that does not
   * compile is reported, not thrown.
   */
  warm(stopped: () => boolean, onError: (err: unknown) => void): Promise<void>;
}

export function lazySerializers(): LazySerializers {
  const selector = SerializerSelector();
  const pending = new Set<() => Serialize>();
  return {
    buildSerializer(externalSchemas, serializerOpts) {
      const compile = selector(externalSchemas, serializerOpts);
      return (route) => {
        let compiled: Serialize | null = null;
        let failed: unknown = null;
        // A schema that does not compile fails every answer of its route alike, compiled once.
        const build = (): Serialize => {
          pending.delete(build);
          if (failed !== null) throw failed;
          try {
            compiled ??= compile(route);
          } catch (err) {
            failed = err;
            throw err;
          }
          return compiled;
        };
        pending.add(build);
        return (data) => (compiled ?? build())(data);
      };
    },
    get pending() {
      return pending.size;
    },
    async warm(stopped, onError) {
      // A compile holds the event loop for a few to tens of ms: each is followed by a pause four
      // times as long, so the warm-up keeps the loop busy a fifth of the time at most (requests,
      // and the store's call deadlines, which allow for a loop the process itself keeps busy).
      let pauseMs = 0;
      for (const build of pending) {
        if (stopped()) return;
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        // Another turn may have compiled it meanwhile (a request), or it failed there.
        if (!pending.has(build)) continue;
        const started = performance.now();
        try {
          build();
        } catch (err) {
          onError(err);
        }
        pauseMs = Math.ceil((performance.now() - started) * 4);
      }
    },
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's response serializers (compiled on first use; `warm()` compiles the rest). */
    serializers: LazySerializers;
  }
}
