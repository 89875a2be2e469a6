/**
 * Picks the meter for the store: the Redis meter on a Redis store's connection and prefix (so every gateway
 * sharing the Redis shares one ledger), the memory meter beside the memory store.
 */
import { RedisStore } from '../store/redis.js';
import type { Store } from '../store/store.js';
import { MemoryMeter, type MeterOptions } from './memory-meter.js';
import { RedisMeter } from './redis-meter.js';
import type { Meter } from './meter.js';

export function createMeter(store: Store, options: MeterOptions): Meter {
  return store instanceof RedisStore ? new RedisMeter(store, options) : new MemoryMeter(store, options);
}

export type { Meter } from './meter.js';
export type { MeterOptions } from './memory-meter.js';
