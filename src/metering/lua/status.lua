-- KEYS bill, money prefix  ARGV clock ('' = the server's)  (after hold.lib.lua)
-- Sweeps first, so `reserved` does not count reservations already expired.
sweep(KEYS[2], clock_ms(ARGV[1]), 16)
return redis.call('HMGET', KEYS[1], 'aiGranted', 'aiSpent', 'aiReserved', 'plan')
