/**
 * Response serializers compiled on first use rather than while the app gets ready. Compiling
 * every route's serializers (a fast-json-stringify build per route and status, each of which
 * validates the shared schemas again) took about 3 s of CPU of every start before the service
 * could answer. Now a route's first answer compiles its own (tens of ms at most), and `warm()`
 * compiles the rest in the background once the app is ready, one per turn of the event loop.
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
   * Compiles the serializers not compiled yet, one per turn of the event loop, until none is
   * left or `stopped()` says so; a schema that does not compile is reported, not thrown.
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
      for (const build of pending) {
        if (stopped()) return;
        await new Promise((resolve) => setImmediate(resolve));
        // Another turn may have compiled it meanwhile (a request), or it failed there.
        if (!pending.has(build)) continue;
        try {
          build();
        } catch (err) {
          onError(err);
        }
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
