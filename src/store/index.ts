/**
 * Picks the store from config: `memory` (the embedded default, one process) or `redis` (shared by any number
 * of gateway processes). Async because a Redis store connects before it is handed out: a gateway whose store
 * is unreachable at startup fails there, with StoreUnavailable, instead of on its first request.
 */
import { MemoryStore } from './memory.js';
import { RedisStore, type RedisStoreOptions } from './redis.js';
import type { Store } from './store.js';

export type StoreConfig = { kind: 'memory' } | ({ kind: 'redis' } & RedisStoreOptions);

export async function createStore(config: StoreConfig): Promise<Store> {
  switch (config.kind) {
    case 'memory':
      return new MemoryStore();
    case 'redis': {
      const { kind: _kind, ...options } = config;
      return RedisStore.connect(options);
    }
  }
}

export type { Store } from './store.js';
export type { RedisStoreOptions } from './redis.js';
