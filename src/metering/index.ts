/**
 * Picks the meter for the store: the Redis meter on a Redis store's connection and prefix (so every gateway
 * sharing the Redis shares one ledger), the memory meter beside the memory store; either way its money
 * writes wait for the store's replicas (durable.ts).
 */
import { RedisStore } from '../store/redis.js';
import type { Store } from '../store/store.js';
import { MemoryMeter, type MeterOptions } from './memory-meter.js';
import { RedisMeter } from './redis-meter.js';
import type { Meter } from './meter.js';
import { DurableMeter } from './durable.js';

export function createMeter(store: Store, options: MeterOptions): Meter {
  return new DurableMeter(store instanceof RedisStore ? new RedisMeter(store, options) : new MemoryMeter(store, options), store);
}

export type { Meter } from './meter.js';
export type { MeterOptions } from './memory-meter.js';
