return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2])}
