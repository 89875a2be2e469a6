-- Stores one decision record once and indexes it by time, trimming the index past the retention (after put.lib.lua).
-- KEYS[1] the time index (zset)  KEYS[2] the record's key
-- ARGV[1] decision id  ARGV[2] record JSON  ARGV[3] at (epoch ms)  ARGV[4] retention (ms)  ARGV[5] now (epoch ms)
put_decision(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
return 1
